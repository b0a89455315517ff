//! The audit's progress bar, driven by a real program that holds its first reply.

use bloomlab::experiments::audit::{AuditParams, AuditPlan, run};
use bloomlab::params::{Count, ValueList};
use bloomlab::structures::FilterKind;
use indicatif::ProgressBar;

/// A program that answers its first `insert` only once `release` exists: until then bloomlab
/// has sent keys and has no reply. A set of keys as the filter.
const WAITING: &str = r#"
import json, os, sys, time
read, out = sys.stdin.buffer.readline, sys.stdout
header = json.loads(read())
release, keys, waited = sys.argv[1], set(), False
def reply(text):
    out.write(text + "\n")
    out.flush()
reply(json.dumps({"name": "waiting set"}))
while True:
    command = read().split()
    if not command or command[0] == b"end":
        break
    if command[0] == b"stats":
        reply("{}")
        continue
    batch = [read() for _ in range(int(command[1]))]
    if command[0] == b"insert":
        while not waited and not os.path.exists(release):
            time.sleep(0.01)
        waited = True
        keys.update(batch)
        reply("ok")
    else:
        reply("".join("1" if key in keys else "0" for key in batch))
"#;

/// Progress counts keys as they are sent to a program: while the program holds its first
/// reply, the bar already counts the batch sent (before, it stayed at 0 until a whole load
/// was in, then jumped).
#[test]
fn progress_counts_keys_as_they_are_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (script, release) = (dir.path().join("waiting.py"), dir.path().join("release"));
    std::fs::write(&script, WAITING).unwrap();
    let filter = format!("exec:python3 {} {}", script.display(), release.display());
    let params = AuditParams {
        n: Some(Count(20_000)),
        loads: Some(ValueList(vec![1.0])),
        queries: Some(Count(10_000)),
        filter: vec![FilterKind::named(&filter).unwrap()],
        no_memory: true,
        ..AuditParams::default()
    };
    let plan = AuditPlan::of(&params).unwrap();
    let progress = ProgressBar::hidden();
    let seen = std::thread::scope(|scope| {
        let audit = scope.spawn(|| run(&plan, &progress));
        let start = std::time::Instant::now();
        while progress.position() == 0 && start.elapsed().as_secs() < 30 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let seen = progress.position();
        std::fs::write(&release, "").unwrap();
        audit.join().unwrap().unwrap();
        seen
    });
    // The first batch (4096 keys) is counted while its reply is held.
    assert!(seen > 0 && seen <= 20_000, "{seen}");
    assert_eq!(progress.position(), 30_000);
}
