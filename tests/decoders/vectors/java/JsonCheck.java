import com.fasterxml.jackson.databind.node.*;
import java.io.*;
import java.util.*;
public class JsonCheck {
    // each input line: kind \t hex-payload ; kind s = string (UTF-8 hex), d = double bits hex, b = binary hex
    public static void main(String[] a) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        while ((line = r.readLine()) != null) {
            String[] kv = line.split("\t", -1);
            ObjectNode n = new ObjectNode(JsonNodeFactory.instance);
            byte[] b = HexFormat.of().parseHex(kv[1]);
            if (kv[0].equals("s")) { String s = new String(b, "UTF-8"); n.set(s, new TextNode(s)); }
            else if (kv[0].equals("d")) n.set("v", new DoubleNode(Double.longBitsToDouble(Long.parseUnsignedLong(kv[1], 16))));
            else if (kv[0].equals("b")) n.set("v", new BinaryNode(b));
            ArrayNode arr = new ArrayNode(JsonNodeFactory.instance); arr.add(new ShortNode((short)-3)); arr.add(new LongNode(Long.MIN_VALUE)); arr.add(NullNode.instance); arr.add(BooleanNode.valueOf(true));
            n.set("z", arr);
            String s = n.toString();
            out.println(HexFormat.of().formatHex(s.getBytes("UTF-8")));
        }
    }
}
