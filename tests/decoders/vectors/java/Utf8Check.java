import java.nio.charset.StandardCharsets;
import java.io.*;
import java.util.*;
public class Utf8Check {
    public static void main(String[] a) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        while ((line = r.readLine()) != null) {
            byte[] b = HexFormat.of().parseHex(line.trim());
            String s = new String(b, StandardCharsets.UTF_8);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < s.length(); i++) sb.append(String.format("%04x", (int) s.charAt(i)));
            out.println(sb);
        }
    }
}
