//! Memory measured, not only reported: a Python filter that stores 32 bits in each 8-byte
//! word allocates twice the bits it addresses, and the audit shows about 2x whether it reports
//! only its logical m (`memory_bits`) or both numbers (`addressed_bits`, `allocated_bits`).

use std::process::Output;

/// A Bloom filter in Python sized by (n, fpr), its m bits kept 32 to a 64-bit word; it reads
/// keys one line at a time, so that the interpreter allocates little beside its table.
/// `logical` reports `memory_bits` = m; `both` reports `addressed_bits` = m and
/// `allocated_bits` = the 64-bit words' bits.
const WASTEFUL: &str = r#"
import array, json, math, sys
MASK = (1 << 64) - 1
read, out = sys.stdin.buffer.readline, sys.stdout
header = json.loads(read())
n, fpr, seed = header["n"], header["fpr"], header["seed"]
m = math.ceil(-n * math.log(fpr) / math.log(2) ** 2)
k = max(1, round(m / n * math.log(2)))
words = array.array("Q", bytes(8 * ((m + 31) // 32)))
if sys.argv[1] == "logical":
    sizes = {"memory_bits": m}
else:
    sizes = {"addressed_bits": m, "allocated_bits": 64 * len(words)}
def probes(line):
    x = int(line)
    h1 = ((x ^ seed) * 0x9E3779B97F4A7C15) & MASK
    h2 = (((h1 >> 29) ^ h1) * 0xBF58476D1CE4E5B9 & MASK) | 1
    return [(h1 + i * h2) % m for i in range(k)]
def reply(text):
    out.write(text + "\n")
    out.flush()
reply(json.dumps(dict(name="wasteful", k=k, seeded=True, **sizes)))
while True:
    command = read().split()
    if not command or command[0] == b"end":
        break
    if command[0] == b"stats":
        reply(json.dumps(sizes))
        continue
    count = int(command[1])
    if command[0] == b"insert":
        for _ in range(count):
            for bit in probes(read()):
                words[bit >> 5] |= 1 << (bit & 31)
        reply("ok")
    else:
        answers = []
        for _ in range(count):
            found = all(words[bit >> 5] >> (bit & 31) & 1 for bit in probes(read()))
            answers.append("1" if found else "0")
        reply("".join(answers))
"#;

fn audit(script: &std::path::Path, mode: &str) -> Output {
    let filter = format!("exec:python3 {} {mode}", script.display());
    crate::common::command()
        .args([
            "audit", "--filter", &filter, "--n", "100000", "--fpr", "1e-6",
        ])
        .args(["--queries", "20000", "--loads", "1", "--format", "json"])
        .output()
        .unwrap()
}

#[test]
fn a_filter_allocating_twice_what_it_addresses_reads_about_2x() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("wasteful.py");
    std::fs::write(&script, WASTEFUL).unwrap();
    for mode in ["logical", "both"] {
        let out = audit(&script, mode);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{mode}: {stderr}");
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let row = &rows[0];
        // m = 2,875,518 bits for 10^5 keys at 10^-6: a 719 KB table of 64-bit words. The
        // interpreter adds little while it reads one line at a time (page rounding: 4 KiB).
        let ratio = row["measured_over_addressed"].as_f64().unwrap();
        assert!((1.8..=2.4).contains(&ratio), "{mode}: {ratio} {row}");
        let addressed = row["bits_per_key_addressed"].as_f64().unwrap();
        assert!((addressed - 28.76).abs() < 0.01, "{mode}: {row}");
        // The predictions use the addressed m: its exact rate is known, not blank.
        assert!(row["fpr_exact"].as_f64().unwrap() < 2e-6, "{mode}: {row}");
        let reported = row["bits_per_key_allocated"].as_f64().unwrap();
        let expected = if mode == "logical" { 28.76 } else { 57.5 };
        assert!((reported - expected).abs() < 0.1, "{mode}: {reported}");
        // 0.36 MB beyond the addressed bits: within the 1 MiB tolerance of an interpreter's
        // own allocations, so not noted (the note's threshold has its unit test).
        assert!(!stderr.contains("MEMORY: wasteful"), "{mode}: {stderr}");
    }
}
