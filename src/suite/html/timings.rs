//! `results/timings/index.html`: the page of the outcomes that hold this machine's timings
//! (advise's), in full, under the name of the CPU that made them. Nothing on it repeats
//! between runs, so it sits in the git-ignored [`TIMINGS_FOLDER`] with their files.

use super::tables::{experiment_tables, figure, head};
use crate::experiments::TIMINGS_FOLDER;
use crate::pipeline::timing::machine;
use crate::report::escape;
use crate::suite::result_name;
use crate::suite::summary::Run;

/// The page of the runs with timings, or none when no run has any.
pub fn timings_page(runs: &[Run]) -> Option<String> {
    let timed: Vec<&Run> = runs
        .iter()
        .filter(|run| run.outcome.repeatable.is_some())
        .collect();
    if timed.is_empty() {
        return None;
    }
    let title = format!("bloomlab timings on {}", machine());
    let mut out = head(&title);
    out.push_str(&format!("<header>\n<h1>{}</h1>\n", escape(&title)));
    out.push_str(
        "<p class=\"identity\">This machine's timings and what is made of them, written by \
         <code>bloomlab reproduce</code>; no other run repeats them, so git ignores this \
         folder. The rates, which repeat, are committed in <a href=\"../index.html\">the \
         results</a>.</p>\n</header>\n",
    );
    for run in timed {
        let name = &run.definition.name;
        out.push_str(&format!(
            "<section id=\"{0}\">\n<h2>{0}</h2>\n",
            escape(name)
        ));
        let caption = format!("{TIMINGS_FOLDER}/{}", result_name(run.definition, "svg"));
        out.push_str(&figure(&run.outcome.plate, "", &caption));
        out.push_str(&experiment_tables(&run.outcome.table, name));
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    Some(out)
}
