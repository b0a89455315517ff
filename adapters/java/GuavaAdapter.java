// Guava's BloomFilter behind the exec protocol (docs/PROTOCOL.md).
//
// Sized by its factory, BloomFilter.create(funnel, n, fpr); the public API takes no m, k or seed
// (Guava hashes with Murmur3_128 under a fixed seed). Keys go in as a Java user hands them:
// a String through Funnels.stringFunnel(UTF_8) (text), a long through Funnels.longFunnel()
// (int; a u64 above 2^63 - 1 as the long with the same 64 bits), or a byte[8], little endian,
// through Funnels.byteArrayFunnel() (bytes). memory_bits and k are read from the header of the
// library's documented serial form (BloomFilter.writeTo: strategy byte, k byte, int count of
// longs, the longs), which is also the table the library probes.

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.jar.JarFile;

public final class GuavaAdapter {
    static final int MAX_BATCH = 65_536;
    static final BigInteger U64_LIMIT = BigInteger.ONE.shiftLeft(64);

    /** A reason the adapter cannot go on, sent as the error reply. */
    static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Refusal(String message) {
            super(message);
        }
    }

    /** The Guava filter for one key form, fed the key line's bytes. */
    interface Keyed {
        void put(byte[] line, int start, int end);

        boolean mightContain(byte[] line, int start, int end);

        BloomFilter<?> filter();
    }

    static <T> Keyed keyed(Funnel<? super T> funnel, long n, double fpr, KeyReader<T> reader) {
        BloomFilter<T> filter = BloomFilter.create(funnel, n, fpr);
        return new Keyed() {
            public void put(byte[] line, int start, int end) {
                filter.put(reader.read(line, start, end));
            }

            public boolean mightContain(byte[] line, int start, int end) {
                return filter.mightContain(reader.read(line, start, end));
            }

            public BloomFilter<?> filter() {
                return filter;
            }
        };
    }

    interface KeyReader<T> {
        T read(byte[] line, int start, int end);
    }

    static long unsignedDecimal(byte[] line, int start, int end) {
        String text = new String(line, start, end - start, StandardCharsets.ISO_8859_1);
        if (text.isEmpty() || !text.chars().allMatch(c -> c >= '0' && c <= '9') || text.length() > 20) {
            throw new Refusal("key \"" + text + "\" is no decimal integer in 0..2^64");
        }
        try {
            return Long.parseUnsignedLong(text);
        } catch (NumberFormatException e) {
            throw new Refusal("key \"" + text + "\" is no decimal integer in 0..2^64");
        }
    }

    static byte[] littleEndian(long value) {
        byte[] bytes = new byte[8];
        for (int i = 0; i < 8; i++) {
            bytes[i] = (byte) (value >>> (8 * i));
        }
        return bytes;
    }

    static Keyed build(Map<String, String> header, String library) {
        if (!"1".equals(header.get("protocol"))) {
            throw new Refusal("unsupported protocol " + header.get("protocol") + " (this adapter speaks 1)");
        }
        long n = integer(header, "n", BigInteger.ONE, BigInteger.valueOf(Long.MAX_VALUE));
        integer(header, "seed", BigInteger.ZERO, U64_LIMIT);
        boolean hasFpr = header.containsKey("fpr");
        if (hasFpr == (header.containsKey("m") || header.containsKey("k"))) {
            throw new Refusal("the header needs either fpr, or m and k");
        }
        if (!hasFpr) {
            throw new Refusal(library + " sizes itself from expected insertions and a false "
                    + "positive probability: its public API takes no m and k (send fpr instead)");
        }
        double fpr = number(header, "fpr");
        if (!(fpr > 0 && fpr < 1)) {
            throw new Refusal("fpr " + header.get("fpr") + " is not a number in (0, 1)");
        }
        String keyForm = header.getOrDefault("key_form", "\"text\"");
        switch (keyForm) {
            case "\"text\"":
                return keyed(Funnels.stringFunnel(StandardCharsets.UTF_8), n, fpr,
                        (line, start, end) -> new String(line, start, end - start, StandardCharsets.UTF_8));
            case "\"int\"":
                return keyed(Funnels.longFunnel(), n, fpr, GuavaAdapter::unsignedDecimal);
            case "\"bytes\"":
                return keyed(Funnels.byteArrayFunnel(), n, fpr,
                        (line, start, end) -> littleEndian(unsignedDecimal(line, start, end)));
            default:
                throw new Refusal("key_form " + keyForm + " is none of text, int, bytes");
        }
    }

    static long integer(Map<String, String> header, String name, BigInteger low, BigInteger limit) {
        String raw = header.get(name);
        try {
            BigInteger value = new BigInteger(raw == null ? "" : raw);
            if (value.compareTo(low) >= 0 && value.compareTo(limit) < 0) {
                return value.longValue();
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new Refusal(name + " " + raw + " is not an integer in " + low + ".." + limit);
    }

    static double number(Map<String, String> header, String name) {
        try {
            return Double.parseDouble(header.get(name));
        } catch (NumberFormatException | NullPointerException e) {
            throw new Refusal(name + " " + header.get(name) + " is not a number");
        }
    }

    /** {memory_bits, k} from the serial form's header; the rest of the form is discarded. */
    static long[] shape(BloomFilter<?> filter) throws IOException {
        byte[] head = new byte[6];
        int[] written = {0};
        OutputStream capture = new OutputStream() {
            public void write(int b) {
                if (written[0] < head.length) {
                    head[written[0]] = (byte) b;
                }
                written[0]++;
            }
        };
        filter.writeTo(capture);
        long k = head[1] & 0xff;
        long longs = ((head[2] & 0xffL) << 24) | ((head[3] & 0xffL) << 16) | ((head[4] & 0xffL) << 8) | (head[5] & 0xffL);
        return new long[] {64 * longs, k};
    }

    static String guavaVersion() {
        try {
            String jar = BloomFilter.class.getProtectionDomain().getCodeSource().getLocation().getPath();
            try (JarFile file = new JarFile(jar)) {
                String version = file.getManifest().getMainAttributes().getValue("Bundle-Version");
                return version == null ? "unknown" : version;
            }
        } catch (Exception e) {
            return "unknown";
        }
    }

    public static void main(String[] args) throws IOException {
        LineReader input = new LineReader(System.in);
        PrintStream output = new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.UTF_8);
        System.exit(new Session(input, output, "guava " + guavaVersion()).run());
    }

    /** One session: the header, then commands until `end` or end of input. */
    static final class Session {
        final LineReader input;
        final PrintStream output;
        final String library;
        Keyed keyed;

        Session(LineReader input, PrintStream output, String library) {
            this.input = input;
            this.output = output;
            this.library = library;
        }

        int run() throws IOException {
            if (!input.next()) {
                return 0;
            }
            try {
                keyed = build(Json.flatObject(input.text(StandardCharsets.UTF_8)), library);
                long[] shape = shape(keyed.filter());
                reply("{\"name\": \"" + library + " BloomFilter\", \"memory_bits\": " + shape[0]
                        + ", \"k\": " + shape[1] + ", \"seeded\": false}");
                while (input.next()) {
                    if (!command(input.text(StandardCharsets.ISO_8859_1))) {
                        return 0;
                    }
                }
                return 0;
            } catch (Truncated e) {
                System.err.println("bloomlab adapter: " + e.getMessage());
                return 1;
            } catch (RuntimeException e) {
                String message = e instanceof Refusal ? e.getMessage() : e.getClass().getName() + ": " + e.getMessage();
                reply("{\"error\": " + Json.quote(message) + "}");
                while (input.next()) {
                    if (input.text(StandardCharsets.ISO_8859_1).equals("end")) {
                        break;
                    }
                }
                return 0;
            }
        }

        /** Runs one command; false at `end`. */
        boolean command(String line) throws IOException {
            if (line.equals("end")) {
                return false;
            }
            if (line.equals("stats")) {
                long[] shape = shape(keyed.filter());
                reply("{\"memory_bits\": " + shape[0] + ", \"k\": " + shape[1] + "}");
                return true;
            }
            String[] parts = line.split(" ", -1);
            boolean batch = parts.length == 2 && (parts[0].equals("insert") || parts[0].equals("query"));
            if (!batch || !parts[1].matches("[0-9]{1,5}") || Integer.parseInt(parts[1]) > MAX_BATCH) {
                throw new Refusal("unknown command \"" + line + "\"");
            }
            int count = Integer.parseInt(parts[1]);
            byte[][] keys = input.batch(count);
            if (parts[0].equals("insert")) {
                for (byte[] key : keys) {
                    keyed.put(key, 0, key.length);
                }
                reply("ok");
            } else {
                StringBuilder answer = new StringBuilder(count);
                for (byte[] key : keys) {
                    answer.append(keyed.mightContain(key, 0, key.length) ? '1' : '0');
                }
                reply(answer.toString());
            }
            return true;
        }

        void reply(String line) {
            output.print(line);
            output.print('\n');
            output.flush();
        }
    }

    static final class Truncated extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Truncated(String message) {
            super(message);
        }
    }

    /** Lines split on '\n' only (a '\r' stays part of the key). */
    static final class LineReader {
        final InputStream in;
        byte[] buffer = new byte[1 << 16];
        int start = 0;
        int filled = 0;
        int lineStart;
        int lineEnd;

        LineReader(InputStream in) {
            this.in = in;
        }

        /** Advances to the next complete line; false at end of input. */
        boolean next() throws IOException {
            while (true) {
                for (int i = start; i < filled; i++) {
                    if (buffer[i] == '\n') {
                        lineStart = start;
                        lineEnd = i;
                        start = i + 1;
                        return true;
                    }
                }
                if (start > 0) {
                    System.arraycopy(buffer, start, buffer, 0, filled - start);
                    filled -= start;
                    start = 0;
                } else if (filled == buffer.length) {
                    buffer = java.util.Arrays.copyOf(buffer, buffer.length * 2);
                }
                int read = in.read(buffer, filled, buffer.length - filled);
                if (read < 0) {
                    return false;
                }
                filled += read;
            }
        }

        String text(java.nio.charset.Charset charset) {
            return new String(buffer, lineStart, lineEnd - lineStart, charset);
        }

        byte[][] batch(int count) throws IOException {
            byte[][] keys = new byte[count][];
            for (int i = 0; i < count; i++) {
                if (!next()) {
                    throw new Truncated("input ended after " + i + " of " + count + " keys");
                }
                keys[i] = java.util.Arrays.copyOfRange(buffer, lineStart, lineEnd);
            }
            return keys;
        }
    }

    /** Just enough JSON for the header: one flat object; values kept as their raw text. */
    static final class Json {
        static Map<String, String> flatObject(String text) {
            Map<String, String> fields = new HashMap<>();
            String body = text.strip();
            if (!body.startsWith("{") || !body.endsWith("}")) {
                throw new Refusal("header is not a JSON object");
            }
            body = body.substring(1, body.length() - 1).strip();
            int at = 0;
            while (at < body.length()) {
                int keyEnd = stringEnd(body, at);
                String key = body.substring(at + 1, keyEnd - 1);
                int colon = body.indexOf(':', keyEnd);
                if (colon < 0 || !body.substring(keyEnd, colon).isBlank()) {
                    throw new Refusal("header is not flat JSON: no ':' after \"" + key + "\"");
                }
                int valueStart = colon + 1;
                while (valueStart < body.length() && Character.isWhitespace(body.charAt(valueStart))) {
                    valueStart++;
                }
                int valueEnd = valueStart < body.length() && body.charAt(valueStart) == '"'
                        ? stringEnd(body, valueStart) : body.indexOf(',', valueStart) < 0 ? body.length() : body.indexOf(',', valueStart);
                fields.put(key, body.substring(valueStart, valueEnd).strip());
                at = valueEnd;
                while (at < body.length() && (Character.isWhitespace(body.charAt(at)) || body.charAt(at) == ',')) {
                    at++;
                }
            }
            return fields;
        }

        /** The index just past the string literal that starts at `at`. */
        static int stringEnd(String body, int at) {
            if (body.charAt(at) != '"') {
                throw new Refusal("header is not flat JSON at \"" + body.substring(at) + "\"");
            }
            for (int i = at + 1; i < body.length(); i++) {
                if (body.charAt(i) == '\\') {
                    i++;
                } else if (body.charAt(i) == '"') {
                    return i + 1;
                }
            }
            throw new Refusal("header is not flat JSON: unterminated string");
        }

        static String quote(String text) {
            StringBuilder quoted = new StringBuilder("\"");
            for (char c : text.toCharArray()) {
                if (c == '"' || c == '\\') {
                    quoted.append('\\').append(c);
                } else if (c < 0x20) {
                    quoted.append(String.format("\\u%04x", (int) c));
                } else {
                    quoted.append(c);
                }
            }
            return quoted.append('"').toString();
        }
    }
}
