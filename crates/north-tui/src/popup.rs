//! The completion popup on screen (the command palette or the `@` file
//! picker): what it completes, its suggestions and the selection. Plain
//! state; [`crate::complete`] fills it and acts on keys.

/// What a popup completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PopupKind {
    /// A command name.
    Command,
    /// A command's argument.
    Argument,
    /// An `@` file mention.
    File,
}

/// One suggestion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Suggestion {
    /// What is shown.
    pub label: String,
    /// One line about it.
    pub about: String,
    /// The composer's whole text once it is chosen.
    pub text: String,
}

/// The popup on screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Popup {
    pub kind: PopupKind,
    pub items: Vec<Suggestion>,
    pub selected: usize,
    /// The composer text it was computed for.
    pub for_text: String,
}
