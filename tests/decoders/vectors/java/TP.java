public final class TP {
    final String topic; final int partition;
    TP(String t, int p) { topic = t; partition = p; }
    @Override public int hashCode() { int r = 31 + partition; r = 31 * r + java.util.Objects.hashCode(topic); return r; }
    @Override public boolean equals(Object o) { if (!(o instanceof TP)) return false; TP x = (TP) o; return partition == x.partition && java.util.Objects.equals(topic, x.topic); }
    @Override public String toString() { return topic + "-" + partition; }
}
