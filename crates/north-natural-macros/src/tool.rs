//! `#[tool]`: turns a function whose first parameter is the tool context
//! into a tool the model can call, with the argument schema derived from the
//! other parameters' Rust types.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, FnArg, ItemFn, Lit, Meta, Pat, ReturnType, Token, Type};

use north_text::dedent;

fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn returns_result(output: &ReturnType) -> bool {
    match output {
        ReturnType::Type(_, ty) => match &**ty {
            Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Result"),
            _ => false,
        },
        ReturnType::Default => false,
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "a proc-macro expander: the code it generates reads in one place"
)]
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let func: ItemFn = syn::parse2(item)?;
    let mut name = func.sig.ident.to_string();
    let mut overwrite = false;
    let mut description = None;
    let args = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr)?;
    for meta in args {
        let Meta::NameValue(nv) = &meta else {
            return Err(syn::Error::new(
                meta.span(),
                "expected `name = \"...\"`, `description = \"...\"` or `overwrite = true`",
            ));
        };
        match (
            &nv.value,
            nv.path.get_ident().map(ToString::to_string).as_deref(),
        ) {
            (
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }),
                Some("name"),
            ) => name = s.value(),
            (
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }),
                Some("description"),
            ) => description = Some(s.value()),
            (
                Expr::Lit(ExprLit {
                    lit: Lit::Bool(b), ..
                }),
                Some("overwrite"),
            ) => overwrite = b.value,
            _ => {
                return Err(syn::Error::new(
                    nv.span(),
                    "expected `name = \"...\"`, `description = \"...\"` or `overwrite = true`",
                ));
            }
        }
    }
    if !is_valid_name(&name) {
        return Err(syn::Error::new(
            func.sig.ident.span(),
            format!(
                "invalid tool name `{name}`: names are ASCII letters, digits and `_`, not starting with a digit"
            ),
        ));
    }
    let description = match description {
        Some(d) => d,
        None => {
            let doc: Vec<String> = func
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("doc"))
                .filter_map(|a| match &a.meta {
                    Meta::NameValue(nv) => match &nv.value {
                        Expr::Lit(ExprLit {
                            lit: Lit::Str(s), ..
                        }) => Some(s.value()),
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            dedent(&doc.join("\n")).trim().to_owned()
        }
    };
    if description.is_empty() {
        return Err(syn::Error::new(
            func.sig.ident.span(),
            "document the tool: its doc comment (or `description = \"...\"`) is what the model reads",
        ));
    }
    if !func.sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            func.sig.generics.span(),
            "a #[tool] function cannot be generic",
        ));
    }
    let mut inputs = func.sig.inputs.iter();
    match inputs.next() {
        Some(FnArg::Typed(t)) if matches!(&*t.ty, Type::Reference(_)) => {}
        _ => {
            return Err(syn::Error::new(
                func.sig.paren_token.span.join(),
                "a #[tool] function takes the tool context first: `fn name(ctx: &north_natural::ToolContext, ...)`",
            ));
        }
    }
    let mut names = Vec::new();
    let mut types = Vec::new();
    for input in inputs {
        let FnArg::Typed(t) = input else {
            return Err(syn::Error::new(
                input.span(),
                "a #[tool] function cannot take `self`",
            ));
        };
        let Pat::Ident(p) = &*t.pat else {
            return Err(syn::Error::new(
                t.pat.span(),
                "tool parameters must be plain names: the model passes them by name",
            ));
        };
        names.push(p.ident.clone());
        types.push((*t.ty).clone());
    }
    let fn_ident = &func.sig.ident;
    let tool_fn = format_ident!("{}_tool", fn_ident);
    let vis = &func.vis;
    let wait = func.sig.asyncness.map(|_| quote!(.await));
    let output = if returns_result(&func.sig.output) {
        quote!(::north_natural::__private::tool_result(out))
    } else {
        quote!(::north_natural::__private::tool_value(out))
    };
    let doc = format!("The natural-block tool `{name}`, calling [`{fn_ident}`].");
    Ok(quote! {
        #func

        #[doc = #doc]
        #vis fn #tool_fn() -> ::north_natural::Tool {
            #[derive(::north_natural::__private::serde::Deserialize, ::north_natural::__private::schemars::JsonSchema)]
            #[serde(crate = "::north_natural::__private::serde", deny_unknown_fields)]
            #[schemars(crate = "::north_natural::__private::schemars")]
            struct __NhArgs {
                #(#names: #types,)*
            }
            fn __nh_call<'a>(
                ctx: &'a ::north_natural::ToolContext,
                args: ::north_natural::__private::serde_json::Value,
            ) -> ::north_natural::ToolFuture<'a> {
                ::std::boxed::Box::pin(async move {
                    let __NhArgs { #(#names),* } =
                        ::north_natural::__private::tool_args::<__NhArgs>(#name, args)?;
                    let out = #fn_ident(ctx, #(#names),*) #wait;
                    #output
                })
            }
            ::north_natural::Tool::__from_macro(
                #name,
                #description,
                ::north_natural::__private::schema_of::<__NhArgs>,
                __nh_call,
                #overwrite,
            )
        }
    })
}
