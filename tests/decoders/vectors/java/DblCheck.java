import java.io.*;
public class DblCheck {
    public static void main(String[] a) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        while ((line = r.readLine()) != null) {
            long bits = Long.parseUnsignedLong(line.trim(), 16);
            out.println(Double.toString(Double.longBitsToDouble(bits)));
        }
    }
}
