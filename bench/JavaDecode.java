// JavaDecode: the strongest decode peer that runs here, Java Avro (Debian's
// libavro-java, the library Java Paimon reads manifests with) plus zstd-jni.
//
//   java -cp <avro, jackson, zstd-jni jars>:DIR JavaDecode FILE [--reps N]
//
// Debian's Avro is 1.8.2, older than its zstandard codec (1.9), so the
// container is walked here and each block is inflated with ZstdInputStream,
// as Avro 1.11's ZstandardCodec (what Paimon runs) does; the records are read
// with GenericDatumReader reusing the record, as DataFileStream does. Runs in
// one warm JVM; prints the same RESULT line as bench_decode.
import com.github.luben.zstd.ZstdInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;

public final class JavaDecode {
    private static long pass(byte[] file) throws IOException {
        BinaryDecoder d = DecoderFactory.get().binaryDecoder(file, null);
        byte[] magic = new byte[4];
        d.readFixed(magic);
        if (magic[0] != 'O' || magic[1] != 'b' || magic[2] != 'j' || magic[3] != 1)
            throw new IOException("not an Avro container");
        String schemaJson = null, codec = "null";
        for (long n = d.readMapStart(); n != 0; n = d.mapNext()) {
            for (long i = 0; i < n; i++) {
                String k = d.readString();
                ByteBuffer v = d.readBytes(null);
                String s = new String(v.array(), v.position(), v.remaining(), StandardCharsets.UTF_8);
                if (k.equals("avro.schema")) schemaJson = s;
                else if (k.equals("avro.codec")) codec = s;
            }
        }
        if (!codec.equals("zstandard")) throw new IOException("codec " + codec + ", expected zstandard");
        byte[] sync = new byte[16], got = new byte[16];
        d.readFixed(sync);
        Schema schema = new Schema.Parser().parse(schemaJson);
        GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(schema);
        GenericRecord rec = null;
        BinaryDecoder bd = null;
        ByteArrayOutputStream raw = new ByteArrayOutputStream(1 << 18);
        byte[] buf = new byte[1 << 16];
        long entries = 0;
        while (!d.isEnd()) {
            long count = d.readLong();
            byte[] block = new byte[(int) d.readLong()];
            d.readFixed(block);
            d.readFixed(got);
            if (!Arrays.equals(sync, got)) throw new IOException("sync marker mismatch");
            raw.reset();
            try (ZstdInputStream in = new ZstdInputStream(new ByteArrayInputStream(block))) {
                for (int r; (r = in.read(buf)) > 0; ) raw.write(buf, 0, r);
            }
            bd = DecoderFactory.get().binaryDecoder(raw.toByteArray(), bd);
            for (long i = 0; i < count; i++) {
                rec = reader.read(rec, bd);
                entries++;
            }
        }
        return entries;
    }

    public static void main(String[] args) throws Exception {
        String path = null;
        int reps = 5;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--reps") && i + 1 < args.length) reps = Integer.parseInt(args[++i]);
            else path = args[i];
        }
        if (path == null || reps < 1) {
            System.err.println("usage: JavaDecode FILE [--reps N]");
            System.exit(2);
        }
        byte[] file = Files.readAllBytes(Paths.get(path));
        double[] times = new double[reps];
        long entries = -1;
        pass(file);   // warm-up: JIT compilation is not what we compare
        for (int i = 0; i < reps; i++) {
            long t0 = System.nanoTime();
            long n = pass(file);
            times[i] = (System.nanoTime() - t0) / 1e9;
            if (entries >= 0 && n != entries) throw new IOException("repetitions disagree");
            entries = n;
            System.err.printf("  rep %d: %.4f s%n", i + 1, times[i]);
        }
        Arrays.sort(times);
        double best = times[0];
        double median = reps % 2 == 1 ? times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2;
        System.out.printf("RESULT entries=%d reps=%d best_s=%.6f median_s=%.6f entries_per_s=%.0f%n",
                          entries, reps, best, median, entries / best);
    }
}
