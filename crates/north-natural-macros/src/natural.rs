//! `#[natural]`: finds the docstring block and the inline blocks of a
//! function and replaces each with the code that runs it, checking its
//! bindings, interpolations and loop context against the lexical scope.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{
    Attribute, Block, Expr, ExprLit, FnArg, ItemFn, Lit, LitStr, Pat, ReturnType, Stmt, Type,
    parse_quote,
};

use crate::loops::Loops;
use crate::text::{
    Piece, bindings, docstring_program, dotted_bindings, inline_program, interpolation,
};

#[derive(Clone)]
struct Var {
    name: String,
    mutable: bool,
    /// A `&mut T` parameter: written through the reference.
    by_mut_ref: bool,
    /// A parameter of the function (including `self`), as opposed to a
    /// local declared in the body.
    param: bool,
}

struct Expander {
    function: String,
    ret: Type,
    /// How blocks check a `return` value, spanned at the return type: a
    /// success type without the derives is reported there, once.
    return_spec: TokenStream,
    /// The function's parameters, captured as context locals at call start.
    params: Vec<Var>,
    scope: Vec<Var>,
    loops: Loops,
    in_closure: bool,
    next_index: u32,
    errors: Vec<syn::Error>,
}

fn collect_pat(pat: &Pat, out: &mut Vec<Var>) {
    match pat {
        Pat::Ident(p) => {
            out.push(Var {
                name: p.ident.to_string(),
                mutable: p.mutability.is_some() && p.by_ref.is_none(),
                by_mut_ref: false,
                param: false,
            });
            if let Some((_, sub)) = &p.subpat {
                collect_pat(sub, out);
            }
        }
        Pat::Tuple(t) => t.elems.iter().for_each(|p| collect_pat(p, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|p| collect_pat(p, out)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| collect_pat(&f.pat, out)),
        Pat::Slice(s) => s.elems.iter().for_each(|p| collect_pat(p, out)),
        Pat::Reference(r) => collect_pat(&r.pat, out),
        Pat::Type(t) => collect_pat(&t.pat, out),
        Pat::Paren(p) => collect_pat(&p.pat, out),
        Pat::Or(o) => {
            if let Some(first) = o.cases.first() {
                collect_pat(first, out);
            }
        }
        _ => {}
    }
}

/// The string literal of an expression statement, through parentheses.
fn literal_of(expr: &Expr) -> Option<&LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        Expr::Paren(p) => literal_of(&p.expr),
        Expr::Group(g) => literal_of(&g.expr),
        _ => None,
    }
}

impl Expander {
    fn lookup(&self, name: &str) -> Option<&Var> {
        self.scope.iter().rev().find(|v| v.name == name)
    }

    fn error(&mut self, span: Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    /// The code that runs one block.
    #[allow(
        clippy::too_many_lines,
        reason = "a proc-macro expander: the code it generates reads in one place"
    )]
    fn block_code(&mut self, span: Span, program: &str, index: u32) -> TokenStream {
        let ret = self.ret.clone();
        let return_spec = self.return_spec.clone();
        let function = self.function.clone();
        let mut binds = Vec::new();
        let mut commits = Vec::new();
        for shown in dotted_bindings(program) {
            let root = shown
                .trim_start_matches(['<', ':'])
                .split('.')
                .next()
                .unwrap_or_default()
                .to_string();
            self.error(span, format!("`{shown}` in natural block: a binding names a whole variable, not a field; write `<{root}>` (the model sees all of it), or bind a local first (`let x = {}.clone();` and `<x>`)", shown.trim_start_matches(['<', ':']).trim_end_matches('>')));
        }
        for b in bindings(program) {
            let shown = format!("<{}{}>", if b.writable { ":" } else { "" }, b.name);
            let Some(var) = self.lookup(&b.name).cloned() else {
                if b.name == "memory" {
                    if b.writable {
                        self.error(span, format!("`{shown}` in natural block: memory is not a variable; the model updates memory fields with nh_assign(\"memory.<field>\", ...)"));
                    }
                    continue;
                }
                self.error(span, format!("unknown binding `{shown}` in natural block: no variable `{}` is in scope here", b.name));
                continue;
            };
            let ident = syn::Ident::new(&var.name, span);
            let name = &b.name;
            if b.writable {
                if !var.mutable {
                    self.error(span, format!("writable binding `{shown}` needs a mutable variable: declare it `let mut {} = ...` (or, for a parameter, take `{}: &mut T`)", b.name, b.name));
                    continue;
                }
                let (current, target) = if var.by_mut_ref {
                    (
                        quote_spanned! {span=> &*#ident },
                        quote_spanned! {span=> &mut *#ident },
                    )
                } else {
                    (
                        quote_spanned! {span=> &#ident },
                        quote_spanned! {span=> &mut #ident },
                    )
                };
                // Through the public trait, so a missing derive is reported
                // with its message and no runtime internals.
                binds.push(quote_spanned! {span=>
                    if let ::core::result::Result::Err(e) =
                        ::north_natural::WritableBinding::__natural_write(#current, &mut __nh_block, #name)
                    {
                        return <#ret as ::north_natural::__private::NaturalReturn>::from_error(e);
                    }
                });
                commits.push(quote_spanned! {span=>
                    if let ::core::result::Result::Err(e) =
                        ::north_natural::WritableBinding::__natural_commit(#target, &mut __nh_done, #name)
                    {
                        return <#ret as ::north_natural::__private::NaturalReturn>::from_error(e);
                    }
                });
            } else {
                binds.push(quote_spanned! {span=>
                    if let ::core::result::Result::Err(e) = ::north_natural::ReadableBinding::__natural_read(&#ident, &mut __nh_block, #name, {
                        #[allow(unused_imports)]
                        use ::north_natural::__private::{ViaJsonSchema as _, ViaNoSchema as _};
                        (&::north_natural::__private::SchemaProbe(&#ident)).natural_schema()
                    }) {
                        return <#ret as ::north_natural::__private::NaturalReturn>::from_error(e);
                    }
                });
            }
        }
        let pieces = match interpolation(program) {
            Ok(p) => p,
            Err(message) => {
                self.error(span, message);
                Vec::new()
            }
        };
        let mut build = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Text(t) => {
                    let mut chars = t.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => {
                            build.push(quote_spanned! {span=> __nh_program.push(#c); })
                        }
                        _ => build.push(quote_spanned! {span=> __nh_program.push_str(#t); }),
                    }
                }
                Piece::Var(name) => {
                    let known = self.lookup(&name).is_some();
                    // Capitalised names may be consts or statics: rustc checks those.
                    if !known && !name.starts_with(|c: char| c.is_ascii_uppercase()) {
                        self.error(span, format!("unknown name `{{{name}}}` in natural block interpolation: no variable `{name}` is in scope here (write `{{{{` and `}}}}` for literal braces)"));
                        continue;
                    }
                    let ident = syn::Ident::new(&name, span);
                    build.push(quote_spanned! {span=>
                        ::north_natural::__private::interpolate(&mut __nh_program, &#ident);
                    });
                }
            }
        }
        let target = self.loops.block_target(span);
        let in_loop = target.is_some();
        let effects = match target {
            Some(label) => quote_spanned! {span=>
                ::north_natural::__private::Effect::Continue => continue #label,
                ::north_natural::__private::Effect::Break => break #label,
            },
            None => quote_spanned! {span=>
                ::north_natural::__private::Effect::Continue
                | ::north_natural::__private::Effect::Break => {}
            },
        };
        // A parameter whose name a body local shadows at this block is not
        // what the name means here: leave its snapshot out of this block.
        let shadowed: Vec<&str> = self
            .params
            .iter()
            .filter(|p| self.lookup(&p.name).is_some_and(|v| !v.param))
            .map(|p| p.name.as_str())
            .collect();
        let line = quote_spanned! {span=> ::core::line!() };
        quote_spanned! {span=>
            {
                static __NH_META: ::north_natural::__private::BlockMeta =
                    ::north_natural::__private::BlockMeta {
                        function: #function,
                        index: #index,
                        line: #line,
                        in_loop: #in_loop,
                        shadowed: &[#(#shadowed),*],
                    };
                let mut __nh_block = ::north_natural::__private::BlockRun::new(&__NH_META, &__nh_call);
                #(#binds)*
                let mut __nh_program = ::std::string::String::new();
                #(#build)*
                let mut __nh_done = match __nh_block.run(__nh_program, #return_spec).await {
                    ::core::result::Result::Ok(done) => done,
                    ::core::result::Result::Err(e) => {
                        return <#ret as ::north_natural::__private::NaturalReturn>::from_error(e);
                    }
                };
                #(#commits)*
                match __nh_done.into_effect() {
                    ::north_natural::__private::Effect::None => {}
                    #effects
                    ::north_natural::__private::Effect::Return(value) => {
                        return <#ret as ::north_natural::__private::NaturalReturn>::from_ok(value);
                    }
                }
            }
        }
    }

    /// Leaves a loop: adds the label its blocks use, keeps its errors.
    fn leave_loop(&mut self, label: &mut Option<syn::Label>) {
        let (added, errors) = self.loops.exit();
        if added.is_some() {
            *label = added;
        }
        self.errors.extend(errors);
    }

    fn visit_cond(&mut self, cond: &mut Expr) {
        match cond {
            Expr::Let(l) => {
                self.visit_expr_mut(&mut l.expr);
                collect_pat(&l.pat, &mut self.scope);
            }
            Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
                self.visit_cond(&mut b.left);
                self.visit_cond(&mut b.right);
            }
            other => self.visit_expr_mut(other),
        }
    }
}

impl VisitMut for Expander {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let mark = self.scope.len();
        for stmt in std::mem::take(&mut block.stmts) {
            match stmt {
                Stmt::Expr(expr, semi) => {
                    let natural = literal_of(&expr).and_then(|lit| {
                        inline_program(&lit.value()).map(|program| (lit.span(), program))
                    });
                    match natural {
                        Some((span, program)) => {
                            if self.in_closure {
                                self.error(span, "a natural block cannot sit inside a closure or async block: move it into the function body");
                                block.stmts.push(Stmt::Expr(expr, semi));
                                continue;
                            }
                            self.next_index += 1;
                            let code = self.block_code(span, &program, self.next_index);
                            block.stmts.push(Stmt::Expr(Expr::Verbatim(code), None));
                        }
                        None => {
                            let mut expr = expr;
                            self.visit_expr_mut(&mut expr);
                            block.stmts.push(Stmt::Expr(expr, semi));
                        }
                    }
                }
                Stmt::Local(mut local) => {
                    if let Some(init) = &mut local.init {
                        self.visit_expr_mut(&mut init.expr);
                        if let Some((_, diverge)) = &mut init.diverge {
                            self.visit_expr_mut(diverge);
                        }
                    }
                    collect_pat(&local.pat, &mut self.scope);
                    block.stmts.push(Stmt::Local(local));
                }
                other => block.stmts.push(other),
            }
        }
        self.scope.truncate(mark);
    }

    fn visit_expr_for_loop_mut(&mut self, e: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut e.expr);
        let mark = self.scope.len();
        collect_pat(&e.pat, &mut self.scope);
        self.loops.enter(e.label.as_ref(), false);
        self.visit_block_mut(&mut e.body);
        self.leave_loop(&mut e.label);
        self.scope.truncate(mark);
    }

    fn visit_expr_while_mut(&mut self, e: &mut syn::ExprWhile) {
        let mark = self.scope.len();
        self.visit_cond(&mut e.cond);
        self.loops.enter(e.label.as_ref(), false);
        self.visit_block_mut(&mut e.body);
        self.leave_loop(&mut e.label);
        self.scope.truncate(mark);
    }

    fn visit_expr_loop_mut(&mut self, e: &mut syn::ExprLoop) {
        self.loops.enter(e.label.as_ref(), true);
        self.visit_block_mut(&mut e.body);
        self.leave_loop(&mut e.label);
    }

    fn visit_expr_break_mut(&mut self, e: &mut syn::ExprBreak) {
        self.loops.note_break(e);
        syn::visit_mut::visit_expr_break_mut(self, e);
    }

    fn visit_expr_if_mut(&mut self, e: &mut syn::ExprIf) {
        let mark = self.scope.len();
        self.visit_cond(&mut e.cond);
        self.visit_block_mut(&mut e.then_branch);
        self.scope.truncate(mark);
        if let Some((_, else_branch)) = &mut e.else_branch {
            self.visit_expr_mut(else_branch);
        }
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        let mark = self.scope.len();
        collect_pat(&arm.pat, &mut self.scope);
        if let Some((_, guard)) = &mut arm.guard {
            self.visit_expr_mut(guard);
        }
        self.visit_expr_mut(&mut arm.body);
        self.scope.truncate(mark);
    }

    fn visit_expr_closure_mut(&mut self, e: &mut syn::ExprClosure) {
        let mark = self.scope.len();
        for input in &e.inputs {
            collect_pat(input, &mut self.scope);
        }
        let (loops, in_closure) = (self.loops.set_aside(), self.in_closure);
        self.in_closure = true;
        self.visit_expr_mut(&mut e.body);
        self.loops.restore(loops);
        self.in_closure = in_closure;
        self.scope.truncate(mark);
    }

    fn visit_expr_async_mut(&mut self, e: &mut syn::ExprAsync) {
        let (loops, in_closure) = (self.loops.set_aside(), self.in_closure);
        self.in_closure = true;
        self.visit_block_mut(&mut e.block);
        self.loops.restore(loops);
        self.in_closure = in_closure;
    }

    fn visit_item_mut(&mut self, _item: &mut syn::Item) {
        // Nested items are separate functions: their strings are not blocks of this one.
    }
}

fn doc_text(attrs: &[Attribute]) -> Option<(String, Span)> {
    let mut lines = Vec::new();
    let mut span = None;
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
        {
            span.get_or_insert(attr.span());
            lines.push(s.value());
        }
    }
    span.map(|s| (lines.join("\n"), s))
}

#[allow(
    clippy::too_many_lines,
    reason = "a proc-macro expander: the code it generates reads in one place"
)]
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new(
            attr.span(),
            "#[natural] takes no arguments",
        ));
    }
    let mut func: ItemFn = syn::parse2(item)?;
    let ret: Type = match &func.sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => parse_quote!(()),
    };
    let function = func.sig.ident.to_string();
    let ret_span = match &func.sig.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => func.sig.ident.span(),
    };
    // rustc underlines the checked type from its first token's span to its
    // last's: give the wrapping tokens those spans so the whole return type
    // is shown (a joined span is not available on stable).
    let ret_end = match &func.sig.output {
        ReturnType::Type(_, ty) => ty
            .to_token_stream()
            .into_iter()
            .last()
            .map_or(ret_span, |t| t.span()),
        ReturnType::Default => ret_span,
    };
    let return_spec_start = quote_spanned! {ret_span=> << };
    let return_spec_end = quote_spanned! {ret_end=>
        as ::north_natural::__private::NaturalReturn>::Ok as ::north_natural::ReturnValue>::__natural_return()
    };
    let mut expander = Expander {
        function: function.clone(),
        ret: ret.clone(),
        return_spec: quote! { #return_spec_start #ret #return_spec_end },
        params: Vec::new(),
        scope: Vec::new(),
        loops: Loops::default(),
        in_closure: false,
        next_index: 0,
        errors: Vec::new(),
    };
    // Parameters captured at call start, with the expression that borrows
    // each (through the reference for `&self`, `&mut self` and `&mut T`, so
    // the model sees the value rather than a reference to it).
    let mut captures = Vec::new();
    for input in &func.sig.inputs {
        match input {
            FnArg::Receiver(r) => {
                expander.scope.push(Var {
                    name: "self".to_owned(),
                    mutable: r.mutability.is_some() && r.reference.is_none(),
                    by_mut_ref: false,
                    param: true,
                });
                let value = if r.reference.is_some() {
                    quote!(&*self)
                } else {
                    quote!(&self)
                };
                captures.push(("self".to_owned(), value, r.mutability.is_some()));
            }
            FnArg::Typed(t) => {
                let first = expander.scope.len();
                collect_pat(&t.pat, &mut expander.scope);
                // `out: &mut T`: the model's value is written through it.
                let by_mut_ref = matches!((&*t.ty, &*t.pat), (Type::Reference(r), Pat::Ident(_)) if r.mutability.is_some());
                for var in &mut expander.scope[first..] {
                    var.param = true;
                    if by_mut_ref {
                        var.mutable = true;
                        var.by_mut_ref = true;
                    }
                    let ident = syn::Ident::new(&var.name, Span::call_site());
                    let value = if var.by_mut_ref {
                        quote!(&*#ident)
                    } else {
                        quote!(&#ident)
                    };
                    captures.push((var.name.clone(), value, var.mutable));
                }
            }
        }
    }
    expander.params = expander.scope.clone();
    let captures: Vec<TokenStream> = captures
        .into_iter()
        .map(|(name, value, mutable)| {
            quote! {
                {
                    #[allow(unused_imports)]
                    use ::north_natural::__private::{
                        ViaJsonSchema as _, ViaNoSchema as _, ViaNoSerialize as _, ViaSerialize as _,
                    };
                    (&::north_natural::__private::ParamProbe(#value)).natural_param(
                        &mut __nh_call,
                        #name,
                        (&::north_natural::__private::SchemaProbe(#value)).natural_schema(),
                        #mutable,
                    );
                }
            }
        })
        .collect();

    let docstring =
        doc_text(&func.attrs).and_then(|(doc, span)| docstring_program(&doc).map(|p| (p, span)));
    let body_was_empty = func.block.stmts.is_empty();
    let docstring_code = docstring
        .as_ref()
        .map(|(program, span)| expander.block_code(*span, program, 0));
    expander.visit_block_mut(&mut func.block);
    if let Some(first) = expander.errors.first().cloned() {
        let mut all = first;
        for e in expander.errors.into_iter().skip(1) {
            all.combine(e);
        }
        return Err(all);
    }

    let stmts = &func.block.stmts;
    let tail = if body_was_empty && docstring.is_some() {
        let return_spec = &expander.return_spec;
        quote! {
            match ::north_natural::__private::implicit_return(#function, #return_spec) {
                ::core::result::Result::Ok(value) => {
                    <#ret as ::north_natural::__private::NaturalReturn>::from_ok(value)
                }
                ::core::result::Result::Err(e) => {
                    <#ret as ::north_natural::__private::NaturalReturn>::from_error(e)
                }
            }
        }
    } else {
        quote!()
    };
    let check = quote_spanned! {ret_span=>
        ::north_natural::__private::assert_natural_return::<#ret>();
    };
    let enter = if captures.is_empty() {
        quote! { let __nh_call = ::north_natural::__private::CallGuard::enter(#function); }
    } else {
        quote! {
            let mut __nh_call = ::north_natural::__private::CallGuard::enter(#function);
            #(#captures)*
        }
    };
    let inner = quote! {
        #enter
        #docstring_code
        #(#stmts)*
        #tail
    };
    let body = if func.sig.asyncness.is_some() {
        quote! { { #check #inner } }
    } else {
        quote! {
            {
                #check
                ::north_natural::__private::block_on::<#ret>(#function, async move { #inner })
            }
        }
    };
    *func.block = syn::parse2(body)?;
    Ok(quote! { #func })
}
