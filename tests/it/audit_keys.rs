//! `audit --keys` and `--query-keys`, as the experiments take them: a library that hashes
//! native integers weakly keeps its promise on random keys and misses it on sequential ones,
//! which only an audit on the keys its users have can show; string keys reach the audit too.

use std::process::Output;

use crate::common;

use common::{bloomlab, text};

/// A Bloom filter sized from (n, fpr) by the classic formulas that hashes a native integer
/// as Java's `Long.hashCode` does, `(x ^ (x >>> 32))` cut to 32 bits, before mixing that
/// well into its k probes: uniform for random 64-bit keys, but two keys whose halves XOR
/// alike collide. The audit's absent keys of a sequential source are `2^40 + c`, which fold
/// to `c ^ 256`: the inserted key of that number, so nearly every query is a false positive.
const WEAK_INT_HASH: &str = r#"
import json, math, sys
read, out = sys.stdin.buffer.readline, sys.stdout
header = json.loads(read())
def reply(text):
    out.write(text + "\n")
    out.flush()
if header.get("key_form") != "int":
    reply(json.dumps({"error": "takes int keys only"}))
    sys.exit(0)
n, fpr = header["n"], header["fpr"]
m = math.ceil(-n * math.log(fpr) / math.log(2) ** 2)
k = max(1, round(m / n * math.log(2)))
bits = bytearray(m)
M = (1 << 64) - 1
def mix(z):
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
def probes(x):
    a = mix((x ^ (x >> 32)) & 0xFFFFFFFF)
    h1, h2 = a % m, (a >> 32) % m | 1
    return [(h1 + i * h2) % m for i in range(k)]
reply(json.dumps({"name": "weak int hash", "addressed_bits": m, "k": k, "seeded": False}))
while True:
    command = read().split()
    if not command or command[0] == b"end":
        break
    if command[0] == b"stats":
        reply(json.dumps({"addressed_bits": m, "k": k}))
        continue
    batch = [int(read()) for _ in range(int(command[1]))]
    if command[0] == b"insert":
        for x in batch:
            for p in probes(x):
                bits[p] = 1
        reply("ok")
    else:
        reply("".join("1" if all(bits[p] for p in probes(x)) else "0" for x in batch))
"#;

fn audit(filter: &str, extra: &[&str]) -> Output {
    let base = [
        "audit",
        "--filter",
        filter,
        "--key-forms",
        "int",
        "--n",
        "20000",
        "--loads",
        "1",
        "--queries",
        "20000",
        "--fail-above",
        "1.5",
        "--no-memory",
        "--quiet",
    ];
    bloomlab(&[&base[..], extra].concat())
}

#[test]
fn a_weak_integer_hash_keeps_its_promise_on_random_keys_and_misses_it_on_sequential_ones() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("weak.py");
    std::fs::write(&script, WEAK_INT_HASH).unwrap();
    let filter = format!("exec:python3 {}", script.display());
    // Random keys: within its 1% promise (the 95% lower bound under 1.5%; fixed seeds).
    let out = audit(&filter, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // Sequential keys 0, 1, 2, ...: far above it, and --fail-above fails the run.
    let out = audit(&filter, &["--keys", "sequential"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let said = text(&out.stderr);
    assert!(said.contains("--fail-above 1.5"), "{said}");
    // The query keys are chosen too: sequential inserts asked with random absent keys.
    let out = audit(&filter, &["--keys", "sequential", "--query-keys", "random"]);
    assert!(out.status.code().is_some(), "{}", text(&out.stderr));
}

#[test]
fn string_keys_reach_the_audit_and_a_short_key_file_is_refused_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.txt");
    let lines: Vec<String> = (0..3000).map(|i| format!("order-{i}")).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let keys = format!("file:{}", file.display());
    let run = |n: &str| {
        bloomlab(&[
            "audit",
            "--filter",
            "fastbloom",
            "--n",
            n,
            "--loads",
            "1",
            "--queries",
            "20000",
            "--keys",
            &keys,
            "--format",
            "json",
            "--quiet",
        ])
    };
    let out = run("3000");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["keys"], keys, "{rows}");
    assert_eq!(rows[0]["false_negatives"], 0, "{rows}");
    assert_eq!(rows[0]["inserted_asked"], 3000, "{rows}");
    // The audit inserts n x the largest load: more than the file holds is refused, exit 2.
    let out = run("3001");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("--keys"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}
