import java.io.*;
import java.util.*;
import scala.jdk.javaapi.CollectionConverters;
public class SetOrder {
    // input lines: groups separated by ';', each group "topic:p1,p2,..."
    public static void main(String[] a) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        String line;
        while ((line = r.readLine()) != null) {
            scala.collection.mutable.HashSet<TP> set = scala.collection.mutable.HashSet$.MODULE$.empty();
            if (!line.isEmpty()) for (String g : line.split(";", -1)) {
                int c = g.lastIndexOf(':');
                String topic = g.substring(0, c);
                List<Integer> ids = new ArrayList<>();
                if (c + 1 < g.length()) for (String p : g.substring(c + 1).split(",")) ids.add(Integer.parseInt(p));
                scala.collection.mutable.Buffer<Integer> buf = CollectionConverters.asScala(ids);
                scala.collection.mutable.Buffer<TP> mapped = (scala.collection.mutable.Buffer<TP>) buf.map(id -> new TP(topic, id));
                scala.collection.immutable.Set<TP> s = mapped.toSet();
                set.$plus$plus$eq(s);
            }
            out.println(set.mkString("[", ",", "]"));
        }
    }
}
