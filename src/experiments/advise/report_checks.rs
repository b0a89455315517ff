//! The lines that set the end-to-end workload beside the model: for the choice, the
//! runner-up and no filter, the measured cost per query beside the predicted one, and the
//! saving over no filter (`t_w` minus the cost) measured beside predicted.

use super::flags::AdvisePlan;
use super::priced::Priced;
use super::validate::Checked;

/// `(measured - predicted) / predicted`, in per cent.
fn off(measured: f64, predicted: f64) -> f64 {
    100.0 * (measured - predicted) / predicted
}

/// The factor by which the end-to-end run missed the prediction at worst: the largest
/// `e^{|ln(measured / predicted)|}` of the configurations it ran (1 where it ran none). It
/// holds what the cost model leaves out on this machine (the work and the filter evicting
/// each other, the load of other processes), which passes of one configuration at a time
/// cannot see; every cost interval is widened by it.
pub fn miss(priced: &[Priced], checked: &[(usize, Checked)]) -> f64 {
    (checked.iter())
        .map(|(i, c)| (c.workload.median / priced[*i].cost.value).ln().abs().exp())
        .filter(|f| f.is_finite())
        .fold(1.0, f64::max)
}

/// One line per run of the workload (what the runs decide is the decision's,
/// [`super::decision`]).
pub fn lines(
    plan: &AdvisePlan,
    priced: &[Priced],
    chosen: usize,
    checked: &[(usize, Checked)],
    t_w: f64,
) -> Vec<String> {
    let none = priced.len() - 1;
    let Some((baseline, rounds)) = checked
        .iter()
        .find(|(i, _)| *i == none)
        .map(|(_, c)| (c.workload.median, c.rounds))
    else {
        return Vec::new();
    };
    let mut lines = vec![format!(
        "end to end ({} rounds, σ = {} exactly, shuffled{}): no filter measured {baseline:.1} ns per query against t_w = {t_w:.1} ({:+.0}%)",
        rounds,
        plan.negative_share,
        if plan.batched { ", batched" } else { "" },
        off(baseline, t_w)
    )];
    for (i, c) in checked.iter().filter(|(i, _)| *i != none) {
        let role = if *i == chosen { "chosen" } else { "runner-up" };
        lines.push(contender_line(plan, &priced[*i], role, c, baseline));
    }
    lines
}

/// The workload of one filter measured beside its prediction: `t_w` as no filter measured it
/// (`baseline`) and the lookups as the ranking timed them; then the prediction from the
/// lookups timed again beside the workload, in the same rounds.
fn contender_line(
    plan: &AdvisePlan,
    priced: &Priced,
    role: &str,
    c: &Checked,
    baseline: f64,
) -> String {
    let sigma = plan.negative_share;
    let predicted = priced.cost_at_work(sigma, baseline);
    let beside = c.lookups.map_or(predicted, |l| {
        priced.cost_with_lookups(sigma, baseline, l.median)
    });
    let p = c.workload;
    let (saving, saving_predicted) = (baseline - p.median, baseline - predicted);
    format!(
        "end to end, {role} {}: measured {:.1} ns per query [{:.1}, {:.1}], predicted {predicted:.1} at the t_w no filter measured ({:+.0}%; {beside:.1} from lookups timed beside it, {:+.0}%); saving over no filter measured {saving:.1}, predicted {saving_predicted:.1} ({:+.0}%)",
        priced.family(),
        p.median,
        p.low,
        p.high,
        off(p.median, predicted),
        off(p.median, beside),
        off(saving, saving_predicted)
    )
}
