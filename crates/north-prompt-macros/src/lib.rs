//! Proc macros for `north-prompt`.
//!
//! `#[derive(PromptParams)]` implements `north_prompt::PromptParams` for a
//! struct with named fields: the names each field has once serialized (serde's
//! `rename`, `rename_all` and `skip` are honoured), so `north_prompt::template!`
//! and `north_prompt::markdown_section!` can reject a placeholder typo while
//! the program compiles.
//!
//! It must not depend on `north-prompt` itself (proc-macro crates cannot) and
//! must not guess: when a field's serialized name cannot be known (a
//! `#[serde(flatten)]` field), the impl says so and the check falls back to
//! template construction time.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::{Data, DeriveInput, Fields, LitStr, parse_macro_input, spanned::Spanned};

/// Derives `north_prompt::PromptParams`: the serialized names of the struct's
/// fields, for compile-time placeholder checks.
#[proc_macro_derive(PromptParams, attributes(serde))]
pub fn derive_prompt_params(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            "PromptParams can only be derived for structs with named fields: \
             template placeholders name struct fields",
        ));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new(
            data.fields.span(),
            "PromptParams needs named fields: template placeholders name struct fields",
        ));
    };

    let container = SerdeAttrs::parse(&input.attrs);
    let mut exhaustive = container.understood;
    let mut names = Vec::new();
    for field in &named.named {
        let attrs = SerdeAttrs::parse(&field.attrs);
        exhaustive &= attrs.understood;
        if attrs.flatten {
            // The flattened type's fields become ours, but a derive cannot see
            // them: leave the verdict to the construction-time check.
            exhaustive = false;
            continue;
        }
        if attrs.skip {
            continue;
        }
        let Some(ident) = &field.ident else { continue };
        let name = match attrs.rename {
            Some(rename) => rename,
            None => {
                let raw = ident.to_string();
                let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_owned();
                match &container.rename_all {
                    Some(rule) => match apply_rename_rule(rule, &raw) {
                        Some(renamed) => renamed,
                        None => {
                            exhaustive = false;
                            raw
                        }
                    },
                    None => raw,
                }
            }
        };
        names.push(name);
    }

    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics ::north_prompt::PromptParams for #ident #ty_generics #where_clause {
            const FIELDS: &'static [&'static str] = &[#(#names),*];
            const EXHAUSTIVE: bool = #exhaustive;
        }
    })
}

/// The serde attributes that decide a field's serialized name.
#[derive(Default)]
struct SerdeAttrs {
    rename: Option<String>,
    rename_all: Option<String>,
    skip: bool,
    flatten: bool,
    /// False when an attribute could not be read; the field list is then
    /// possibly incomplete and the compile-time check stays lenient.
    understood: bool,
}

impl SerdeAttrs {
    fn parse(attrs: &[syn::Attribute]) -> Self {
        let mut out = SerdeAttrs {
            understood: true,
            ..SerdeAttrs::default()
        };
        for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
            let result = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    out.rename = serialize_name(&meta)?.or(out.rename.take());
                } else if meta.path.is_ident("rename_all") {
                    out.rename_all = serialize_name(&meta)?.or(out.rename_all.take());
                } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_serializing") {
                    out.skip = true;
                } else if meta.path.is_ident("flatten") {
                    out.flatten = true;
                } else {
                    skip_meta_value(&meta)?;
                }
                Ok(())
            });
            if result.is_err() {
                out.understood = false;
            }
        }
        out
    }
}

/// Reads `name = "x"` or `name(serialize = "x", deserialize = "y")`, keeping
/// the serialize side: placeholders are filled from serialized params.
fn serialize_name(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<Option<String>> {
    if meta.input.peek(syn::Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        return Ok(Some(lit.value()));
    }
    let mut found = None;
    meta.parse_nested_meta(|inner| {
        let lit: LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("serialize") {
            found = Some(lit.value());
        }
        Ok(())
    })?;
    Ok(found)
}

fn skip_meta_value(meta: &syn::meta::ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream2>()?;
    }
    Ok(())
}

/// serde's `rename_all` rules as they apply to snake_case field names.
fn apply_rename_rule(rule: &str, field: &str) -> Option<String> {
    let pascal = || {
        let mut out = String::with_capacity(field.len());
        let mut upper = true;
        for ch in field.chars() {
            if ch == '_' {
                upper = true;
            } else if upper {
                out.extend(ch.to_uppercase());
                upper = false;
            } else {
                out.push(ch);
            }
        }
        out
    };
    let renamed = match rule {
        "lowercase" => field.to_ascii_lowercase(),
        "UPPERCASE" => field.to_ascii_uppercase(),
        "PascalCase" => pascal(),
        "camelCase" => {
            let p = pascal();
            let mut chars = p.chars();
            match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => p,
            }
        }
        "snake_case" => field.to_owned(),
        "SCREAMING_SNAKE_CASE" => field.to_ascii_uppercase(),
        "kebab-case" => field.replace('_', "-"),
        "SCREAMING-KEBAB-CASE" => field.to_ascii_uppercase().replace('_', "-"),
        _ => return None,
    };
    Some(renamed)
}

#[cfg(test)]
mod tests {
    use super::apply_rename_rule;

    #[test]
    fn rename_rules_follow_serde() {
        let cases = [
            ("lowercase", "user_name"),
            ("UPPERCASE", "USER_NAME"),
            ("PascalCase", "UserName"),
            ("camelCase", "userName"),
            ("snake_case", "user_name"),
            ("SCREAMING_SNAKE_CASE", "USER_NAME"),
            ("kebab-case", "user-name"),
            ("SCREAMING-KEBAB-CASE", "USER-NAME"),
        ];
        for (rule, expected) in cases {
            assert_eq!(
                apply_rename_rule(rule, "user_name").as_deref(),
                Some(expected),
                "{rule}"
            );
        }
        assert_eq!(apply_rename_rule("Title Case", "x"), None);
    }
}
