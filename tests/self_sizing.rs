//! A library that sizes itself from (n, ε) and refuses m and k, as rbloom does, runs in
//! overfill and seed-check by `--fpr`; and `--param KEY=VALUE` reaches a program's header.

mod common;

use common::exec_fixture as fixture;
use common::{bloomlab, text};

#[test]
fn a_self_sizing_library_runs_in_overfill_by_rate() {
    let filter = format!("exec:{} --sizes-itself", fixture());
    let base = ["overfill", "--filter", &filter, "--design-n", "2000"];
    let tail = ["--factors", "1,2", "--queries", "40000", "--format", "json"];
    // By shape, the library refuses, as rbloom does.
    let out = bloomlab(&[&base[..], &tail[..]].concat());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("takes no m and k"),
        "{}",
        text(&out.stderr)
    );
    let out = bloomlab(&[&base[..], &["--fpr", "0.01"], &tail[..]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Sized for the design n (not the keys inserted): at s = 1 the rate is the promise, at
    // s = 2 about 15.7 times it (within 4 binomial standard errors; fixed seeds).
    for (row, expected) in rows.as_array().unwrap().iter().zip([0.01f64, 0.157]) {
        let measured = row["fpr_measured"].as_f64().unwrap();
        let se = (expected * (1.0 - expected) / 40_000.0).sqrt();
        assert!((measured - expected).abs() < 4.0 * se, "{row}");
        assert_eq!(row["design_n"], 2000);
    }
    for bad in [&["--fpr", "1.5"][..], &["--fpr", "0.01", "--k", "3"][..]] {
        let out = bloomlab(&[&base[..], bad].concat());
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(text(&out.stderr).contains("--fpr"), "{}", text(&out.stderr));
    }
}

#[test]
fn a_self_sizing_library_runs_in_seed_check_by_rate() {
    let filter = format!("exec:{} --sizes-itself", fixture());
    let out = bloomlab(&[
        "seed-check",
        "--filter",
        &filter,
        "--n",
        "2000",
        "--fpr",
        "0.01",
        "--seeds",
        "4",
        "--queries",
        "20000",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(rows.as_array().unwrap().len() >= 6);
}

#[test]
fn params_reach_the_header_and_protocol_fields_are_refused() {
    // The fixture refuses a header holding `refuse_me`, naming it: the option got there.
    let filter = format!("exec:{}", fixture());
    let args = [
        "audit", "--filter", &filter, "--n", "1000", "--loads", "1", "--quiet",
    ];
    let out = bloomlab(&[&args[..], &["--param", "refuse_me=\"yes\""]].concat());
    let said = text(&out.stdout) + &text(&out.stderr);
    assert!(said.contains("refuse_me = \"yes\""), "{said}");
    // The request is quoted whole, never cut inside a value.
    assert!(
        said.contains("\"refuse_me\":\"yes\",\"fpr\":0.01}`"),
        "{said}"
    );
    for bad in ["fpr=0.5", "novalue"] {
        let out = bloomlab(&[&args[..], &["--param", bad]].concat());
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            text(&out.stderr).contains("--param"),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn sweep_size_sends_a_self_sizing_library_each_size_as_a_rate() {
    let filter = format!("exec:{} --sizes-itself", fixture());
    let base = ["sweep-size", "--filter", &filter, "--n", "2000"];
    let tail = [
        "--bits-per-key",
        "6,10",
        "--queries",
        "40000",
        "--format",
        "json",
    ];
    let out = bloomlab(&[&base[..], &tail[..]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Sized by ε = e^(-b ln² 2) at b bits per key: 5.6% at 6, 0.82% at 10; the program's
    // own m and k give its exact rate, and the count agrees with it (|z| < 4, fixed seeds).
    for (row, eps) in rows.as_array().unwrap().iter().zip([0.0561f64, 0.0082]) {
        let measured = row["fpr_measured"].as_f64().unwrap();
        assert!((measured / eps - 1.0).abs() < 0.25, "{row}");
        assert!(row["z_exact"].as_f64().unwrap().abs() < 4.0, "{row}");
        // The row's m and k are the program's own, not the sweep's default k = 4.
        assert_eq!(row["m"], row["memory_bits"], "{row}");
    }
    assert_eq!(rows[1]["k"], 7, "{rows}");
    // k is not an axis such a library can take: refused before work, naming --k and it.
    let out = bloomlab(&[&base[..], &["--k", "3"], &tail[..]].concat());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("--k 3") && said.contains("--sizes-itself"),
        "{said}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn sweep_k_refuses_a_self_sizing_library_before_work() {
    let filter = format!("exec:{} --sizes-itself", fixture());
    let out = bloomlab(&[
        "sweep-k",
        "--filter",
        &filter,
        "--n",
        "2000",
        "--k",
        "2,4",
        "--queries",
        "10000",
        "--replicates",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("--k 2,4"), "{said}");
    assert!(
        said.contains("sweep-k") && said.contains("takes no m and k"),
        "{said}"
    );
    // A program that takes m and k runs as before.
    let filter = format!("exec:{}", fixture());
    let out = bloomlab(&[
        "sweep-k",
        "--filter",
        &filter,
        "--n",
        "2000",
        "--k",
        "2,4",
        "--queries",
        "10000",
        "--replicates",
        "1",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn overfill_titles_a_self_sizing_program_with_the_m_it_reports() {
    // Sized for half the design n, the program reports m = 9586 where the classic sizing of
    // 2000 keys at 1% is 19171: the title must show the program's m, not the classic one.
    let filter = format!("exec:{} --sizes-itself --break undersized", fixture());
    let out = bloomlab(&[
        "overfill",
        "--filter",
        &filter,
        "--design-n",
        "2000",
        "--fpr",
        "0.01",
        "--factors",
        "1",
        "--queries",
        "10000",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let title = text(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(!title.contains("19171"), "{title}");
    assert!(
        title.contains("m = 9586 as the filter reports it"),
        "{title}"
    );
}

/// A set of keys that sizes itself from (n, fpr) and reports a shape of its own choosing
/// (m = 64n bits, k = 3), refusing m and k as rbloom does.
const OWN_SHAPE: &str = r#"
import json, sys
read, out = sys.stdin.buffer.readline, sys.stdout
header = json.loads(read())
def reply(text):
    out.write(text + "\n")
    out.flush()
if "fpr" not in header:
    reply(json.dumps({"error": "sizes itself: takes no m and k"}))
    sys.exit(0)
shape = {"addressed_bits": 64 * header["n"], "k": 3}
reply(json.dumps(dict(name="own shape", **shape)))
keys = set()
while True:
    command = read().split()
    if not command or command[0] == b"end":
        break
    if command[0] == b"stats":
        reply(json.dumps(shape))
        continue
    batch = [read() for _ in range(int(command[1]))]
    if command[0] == b"insert":
        keys.update(batch)
        reply("ok")
    else:
        reply("".join("1" if key in keys else "0" for key in batch))
"#;

#[test]
fn overfill_and_seed_check_give_the_m_and_k_a_self_sizing_program_reports() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("own_shape.py");
    std::fs::write(&script, OWN_SHAPE).unwrap();
    let filter = format!("exec:python3 {}", script.display());
    let out = bloomlab(&[
        "overfill",
        "--filter",
        &filter,
        "--design-n",
        "1000",
        "--fpr",
        "0.01",
        "--factors",
        "1",
        "--queries",
        "10000",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    // The program's k = 3 and m = 64000, not the classic design's k = 7 and m = 9586.
    assert!(said.contains("k = 3: sensitivity"), "{said}");
    assert!(!said.contains("k = 7: sensitivity"), "{said}");
    assert!(
        said.contains("m = 64000 as the filter reports it"),
        "{said}"
    );
    // seed-check's title too gives the program's m and k at n, not the classic 9586 and 7.
    let out = bloomlab(&[
        "seed-check",
        "--filter",
        &filter,
        "--n",
        "1000",
        "--fpr",
        "0.01",
        "--seeds",
        "2",
        "--queries",
        "10000",
    ]);
    let said = text(&out.stdout);
    let title = said.lines().next().unwrap_or_default();
    assert!(
        title.contains("n = 1000, m = 64000, k = 3 as the filter reports them"),
        "{said}{}",
        text(&out.stderr)
    );
}
