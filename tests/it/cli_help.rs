//! Every subcommand's `--help` opens with its own about line (issue 43: `conform --help` read
//! the doc comment of a struct of flags it shares), the one `bloomlab --help` lists for it.

use std::process::Command;

use crate::common::BIN;

fn help(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_subcommand_opens_its_help_with_its_own_about_line() {
    let top = help(&[]);
    let listed: Vec<(String, String)> = top
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| {
            let (name, about) = line.trim().split_once(' ')?;
            Some((name.to_string(), about.trim().to_string()))
        })
        .filter(|(name, _)| name != "help")
        .collect();
    assert!(listed.len() >= 10, "{top}");
    for (name, about) in listed {
        let first = help(&[&name])
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        assert_eq!(first, about, "{name}");
    }
}
