//! `#[derive(GpuSoa)]`: a struct of any size stored as one column per field.
//!
//! The syntax decides what it can (named fields, no generics, a struct);
//! whether each field can be a column (a `GpuAligned` type) is left to the
//! compiler, through a bound whose message names the fix. The output is the
//! `GpuSoa` impl (the struct's layout with its fields in offset order, so the
//! CUDA header reproduces Rust's layout whatever order Rust chose, and the
//! hooks the arena drives, one call per field in declaration order) and the
//! `<Name>Columns` struct of typed column handles.

use crate::ctxt::Ctxt;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

pub fn derive(input: &DeriveInput) -> syn::Result<TokenStream> {
    let cx = Ctxt::new();
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`GpuSoa` does not support generic structs: the CUDA header needs one name per \
             layout and the column types must be known; write a concrete struct (or a type alias \
             per instantiation wrapped in a concrete struct)",
        );
    }
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) if !named.named.is_empty() => Some(&named.named),
            Fields::Named(_) | Fields::Unit => {
                cx.error_spanned_by(
                    &input.ident,
                    "`GpuSoa` needs at least one field: each field becomes a column",
                );
                None
            }
            Fields::Unnamed(_) => {
                cx.error_spanned_by(
                    &input.ident,
                    "`GpuSoa` needs named fields: the columns are named like them",
                );
                None
            }
        },
        Data::Enum(data) => {
            cx.error_spanned_by(
                data.enum_token,
                "`GpuSoa` applies to structs with named fields, not enums",
            );
            None
        }
        Data::Union(data) => {
            cx.error_spanned_by(
                data.union_token,
                "`GpuSoa` applies to structs with named fields, not unions",
            );
            None
        }
    };
    cx.check()?;
    let Some(fields) = fields else {
        return Err(syn::Error::new(Span::call_site(), "`GpuSoa`: no fields"));
    };

    let ident = &input.ident;
    let vis = &input.vis;
    let columns = format_ident!("{}Columns", ident);
    let name = ident.to_string();
    let count = fields.len();
    let members: Vec<_> = fields.iter().filter_map(|f| f.ident.clone()).collect();
    let names: Vec<String> = members.iter().map(ToString::to_string).collect();
    let types: Vec<_> = fields.iter().map(|f| &f.ty).collect();
    let priv_ = quote!(::gpu_aligned::soa::__derive);

    // A check per field, spanned on the field's type, so the compiler's
    // error names the field and the fix. The impl also carries the bound,
    // made generic over a lifetime so a failing one is not an error of its
    // own: inside the impl it is assumed, so each bad field is one error,
    // not one per use.
    let checks = types.iter().map(|ty| {
        quote_spanned! {ty.span()=>
            #priv_::column_check::<#ty>();
        }
    });
    let bounds = types.iter().map(|ty| {
        quote_spanned! {ty.span()=>
            #ty: #priv_::Column<'__gpu_soa>
        }
    });
    let doc_columns = format!(
        "The columns of a structure of arrays of [`{name}`]: one typed array handle per field, \
         named like the field, each usable with every arena verb."
    );

    Ok(quote! {
        #[doc = #doc_columns]
        #[derive(Debug)]
        #[must_use = "columns hold arena memory: give them back with `Arena::free_soa`"]
        #vis struct #columns {
            #(
                #[doc = concat!("The column of `", #names, "`.")]
                pub #members: ::gpu_aligned::arena::ArenaSlice<#types>,
            )*
        }

        // SAFETY: `LAYOUT` is built from `size_of`, `align_of` and
        // `offset_of!` of the struct and each field, so it describes the
        // struct; every field type is `GpuAligned` (the bounds), and each
        // hook names every field once, in declaration order.
        const _: () = {
            #[allow(dead_code)]
            fn __gpu_soa_checks() {
                #(#checks)*
            }
        };

        unsafe impl<'__gpu_soa> ::gpu_aligned::soa::GpuSoa for #ident
        where
            #(#bounds,)*
        {
            const LAYOUT: ::gpu_aligned::GpuLayout = ::gpu_aligned::__private::layout(
                #name,
                ::core::mem::size_of::<#ident>(),
                ::core::mem::align_of::<#ident>(),
                0,
                &const {
                    #priv_::by_offset([#(
                        ::gpu_aligned::__private::field(
                            #names,
                            ::core::mem::offset_of!(#ident, #members),
                            ::core::mem::size_of::<#types>(),
                            ::core::mem::align_of::<#types>(),
                            false,
                            <#types as ::gpu_aligned::GpuData>::TYPE,
                        )
                    ),*])
                },
            );
            const COLUMNS: usize = #count;
            type Columns = #columns;

            fn __plan<P: #priv_::Planner>(planner: &mut P) {
                #( planner.column::<#types>(#names); )*
            }

            fn __columns<S: #priv_::Source>(source: &mut S) -> ::core::result::Result<#columns, S::Error> {
                ::core::result::Result::Ok(#columns {
                    #( #members: source.column::<#types>(#names)?, )*
                })
            }

            fn __visit<V: #priv_::Visitor>(columns: &#columns, visitor: &mut V) -> ::core::result::Result<(), V::Error> {
                #( visitor.column::<#types>(#names, &columns.#members)?; )*
                ::core::result::Result::Ok(())
            }

            fn __consume<C: #priv_::Consumer>(columns: #columns, consumer: &mut C) {
                #( consumer.column::<#types>(#names, columns.#members); )*
            }

            fn __scatter<W: #priv_::Writer>(items: &[Self], columns: &#columns, writer: &mut W) -> ::core::result::Result<(), W::Error> {
                #({
                    let values: #priv_::Vec<#types> = items.iter().map(|item| item.#members).collect();
                    writer.column::<#types>(&columns.#members, &values)?;
                })*
                ::core::result::Result::Ok(())
            }

            fn __gather<R: #priv_::Reader>(columns: &#columns, len: usize, reader: &mut R) -> ::core::result::Result<#priv_::Vec<Self>, R::Error> {
                #( let #members: #priv_::Vec<#types> = reader.column::<#types>(&columns.#members, len)?; )*
                let mut items = #priv_::Vec::with_capacity(len);
                for index in 0..len {
                    items.push(#ident {
                        #( #members: match #members.get(index) {
                            ::core::option::Option::Some(value) => *value,
                            ::core::option::Option::None => return ::core::result::Result::Err(R::short(#names)),
                        }, )*
                    });
                }
                ::core::result::Result::Ok(items)
            }
        }
    })
}
