//! The model's plan as a checklist that updates in place: its NOTES goals
//! and open loops, as the agent reports them ([`Event::Plan`]). An item
//! that leaves the lists is done (ticked), an open loop is in progress, a
//! goal not started yet is open. Shown above the composer while anything
//! is left to do.
//!
//! [`Event::Plan`]: north_protocol::Event::Plan

use ratatui::text::{Line, Span};

use crate::style;

/// Items shown at most; the rest are counted.
const SHOWN: usize = 8;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    /// A goal not started.
    Open,
    /// An open loop: started, not finished.
    Active,
    /// It left the plan: done.
    Done,
}

/// The plan as seen so far this session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Checklist {
    pub items: Vec<(String, Mark)>,
}

impl Checklist {
    /// Takes the plan as it is now.
    pub fn update(&mut self, goals: &[String], open_loops: &[String]) {
        for (text, mark) in &mut self.items {
            *mark = if open_loops.contains(text) {
                Mark::Active
            } else if goals.contains(text) {
                Mark::Open
            } else {
                Mark::Done
            };
        }
        for (text, mark) in goals
            .iter()
            .map(|g| (g, Mark::Open))
            .chain(open_loops.iter().map(|l| (l, Mark::Active)))
        {
            if !self.items.iter().any(|(t, _)| t == text) {
                self.items.push((text.clone(), mark));
            }
        }
    }

    /// Whether anything is left to do.
    pub fn is_active(&self) -> bool {
        self.items.iter().any(|(_, m)| *m != Mark::Done)
    }

    /// The checklist's rows.
    pub fn lines(&self, width: u16) -> Vec<Line<'static>> {
        if !self.is_active() {
            return Vec::new();
        }
        let done = self.items.iter().filter(|(_, m)| *m == Mark::Done).count();
        let mut out = vec![Line::from(vec![
            Span::styled("Plan", style::notice()),
            Span::styled(
                format!(" · {done} of {} done", self.items.len()),
                style::dim(),
            ),
        ])];
        // Done items scroll away first when the list is long.
        let skip = self.items.len().saturating_sub(SHOWN);
        let mut skipped = 0;
        let room = usize::from(width).saturating_sub(6).max(10);
        for (text, mark) in &self.items {
            if skipped < skip && *mark == Mark::Done {
                skipped += 1;
                continue;
            }
            let (glyph, st) = match mark {
                Mark::Done => ("☑ ", style::dim()),
                Mark::Active => ("◐ ", style::key()),
                Mark::Open => ("☐ ", ratatui::style::Style::new()),
            };
            out.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(glyph, st),
                Span::styled(crate::wrap::truncate(text, room), st),
            ]));
            if out.len() > SHOWN {
                break;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_leaving_the_plan_are_done() {
        let mut c = Checklist::default();
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        c.update(&s(&["parse", "render", "test"]), &[]);
        c.update(&s(&["render", "test"]), &s(&["render"]));
        assert_eq!(
            c.items,
            vec![
                ("parse".into(), Mark::Done),
                ("render".into(), Mark::Active),
                ("test".into(), Mark::Open)
            ]
        );
        c.update(&[], &[]);
        assert!(!c.is_active());
    }
}
