//! Compile-time checked templates.

/// A template string whose placeholders are checked against the fields of a
/// params type while the program compiles.
///
/// The params type must implement [`PromptParams`](crate::PromptParams)
/// (`#[derive(PromptParams)]`); the template must be a constant expression
/// (a string literal). A typo is a compile error; an invalid `$` too.
///
/// ```
/// use north_prompt::{MarkdownSection, PromptParams, template};
/// #[derive(serde::Serialize, schemars::JsonSchema, Default, PromptParams)]
/// struct ToneParams { tone: String }
///
/// let section = MarkdownSection::<ToneParams>::new(
///     "Tone",
///     "tone",
///     template!(ToneParams, "Target tone: ${tone}"),
/// );
/// # let _ = section;
/// ```
///
/// ```compile_fail,E0080
/// use north_prompt::{PromptParams, template};
/// #[derive(serde::Serialize, schemars::JsonSchema, Default, PromptParams)]
/// struct ToneParams { tone: String }
///
/// let text = template!(ToneParams, "Target tone: ${tnoe}");
/// ```
#[macro_export]
macro_rules! template {
    ($params:ty, $text:expr $(,)?) => {{
        const {
            $crate::__private::check_placeholders(
                $text,
                <$params as $crate::PromptParams>::FIELDS,
                <$params as $crate::PromptParams>::EXHAUSTIVE,
            )
        };
        $text
    }};
}

/// A [`MarkdownSection`](crate::MarkdownSection) whose key and template are
/// checked while the program compiles: `markdown_section!(Params, title,
/// key, template)`. Chain the usual builder methods on the result.
///
/// ```
/// use north_prompt::{PromptParams, markdown_section};
/// #[derive(serde::Serialize, schemars::JsonSchema, Default, PromptParams)]
/// struct TaskParams { objective: String }
///
/// let task = markdown_section!(TaskParams, "Task", "task", "Plan the following: ${objective}")
///     .summary("A task is waiting.");
/// # let _ = task;
/// ```
///
/// ```compile_fail,E0080
/// use north_prompt::{PromptParams, markdown_section};
/// #[derive(serde::Serialize, schemars::JsonSchema, Default, PromptParams)]
/// struct TaskParams { objective: String }
///
/// let task = markdown_section!(TaskParams, "Task", "Bad Key", "Plan ${objective}");
/// ```
#[macro_export]
macro_rules! markdown_section {
    ($params:ty, $title:expr, $key:expr, $text:expr $(,)?) => {{
        const { $crate::__private::check_section_key($key) };
        $crate::MarkdownSection::<$params>::new($title, $key, $crate::template!($params, $text))
    }};
}
