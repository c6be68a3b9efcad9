//! Type-erased views without the asynchronous hydration path.
//!
//! `AnyView` keeps a pointer to its view's `hydrate_async`, so every view erased with
//! `.into_any()` brings the asynchronous hydration of its whole subtree into the wasm, although
//! this app hydrates synchronously (`hydrate_body`) and never calls it. That code was 315 KB of
//! the release wasm's 2.1 MB (`make wasm-weights`). [`Erase::erased`] and [`SyncHydrated`] wrap
//! a view in a type whose `hydrate_async` is tachys's default, the synchronous `hydrate`, so the
//! subtree's asynchronous copy is never compiled. Everything else is passed through unchanged:
//! the server renders and the browser hydrates exactly the same markup.
//!
//! Every place that erases a view goes through here: `.erased()` instead of `.into_any()`,
//! [`shown`] and [`shown_or`] instead of `<Show>` (whose children are erased), and the router's
//! page components return a [`SyncHydrated`] view.

use leptos::either::Either;
use leptos::prelude::*;
use leptos::tachys::html::attribute::any_attribute::AnyAttribute;
use leptos::tachys::html::attribute::Attribute;
use leptos::tachys::hydration::Cursor;
use leptos::tachys::ssr::StreamBuilder;
use leptos::tachys::view::add_attr::AddAnyAttr;
use leptos::tachys::view::{Position, PositionState, Render, RenderHtml};

/// A view that hydrates only synchronously (see the module documentation).
pub struct SyncHydrated<V>(pub V);

impl<V: Render> Render for SyncHydrated<V> {
    type State = V::State;

    fn build(self) -> Self::State {
        self.0.build()
    }

    fn rebuild(self, state: &mut Self::State) {
        self.0.rebuild(state);
    }
}

impl<V: RenderHtml> AddAnyAttr for SyncHydrated<V> {
    type Output<NewAttr: Attribute> = SyncHydrated<V::Output<NewAttr>>;

    fn add_any_attr<NewAttr: Attribute>(self, attr: NewAttr) -> Self::Output<NewAttr>
    where
        Self::Output<NewAttr>: RenderHtml,
    {
        SyncHydrated(self.0.add_any_attr(attr))
    }
}

impl<V: RenderHtml> RenderHtml for SyncHydrated<V> {
    type AsyncOutput = SyncHydrated<V::AsyncOutput>;
    type Owned = SyncHydrated<V::Owned>;

    const MIN_LENGTH: usize = V::MIN_LENGTH;
    const EXISTS: bool = V::EXISTS;

    fn dry_resolve(&mut self) {
        self.0.dry_resolve();
    }

    fn resolve(self) -> impl std::future::Future<Output = Self::AsyncOutput> + Send {
        let view = self.0;
        async move { SyncHydrated(view.resolve().await) }
    }

    fn html_len(&self) -> usize {
        self.0.html_len()
    }

    fn to_html_with_buf(
        self,
        buf: &mut String,
        position: &mut Position,
        escape: bool,
        mark_branches: bool,
        extra_attrs: Vec<AnyAttribute>,
    ) {
        self.0
            .to_html_with_buf(buf, position, escape, mark_branches, extra_attrs);
    }

    fn to_html_async_with_buf<const OUT_OF_ORDER: bool>(
        self,
        buf: &mut StreamBuilder,
        position: &mut Position,
        escape: bool,
        mark_branches: bool,
        extra_attrs: Vec<AnyAttribute>,
    ) {
        self.0.to_html_async_with_buf::<OUT_OF_ORDER>(
            buf,
            position,
            escape,
            mark_branches,
            extra_attrs,
        );
    }

    fn hydrate<const FROM_SERVER: bool>(
        self,
        cursor: &Cursor,
        position: &PositionState,
    ) -> Self::State {
        self.0.hydrate::<FROM_SERVER>(cursor, position)
    }

    // `hydrate_async` is left to tachys's default: the synchronous `hydrate` above.

    fn into_owned(self) -> Self::Owned {
        SyncHydrated(self.0.into_owned())
    }
}

/// `.erased()`: `.into_any()` without the asynchronous hydration path.
pub trait Erase {
    fn erased(self) -> AnyView;
}

impl<V: RenderHtml + Send> Erase for V {
    fn erased(self) -> AnyView {
        SyncHydrated(self).into_any()
    }
}

/// `view` while `when` holds, nothing otherwise: `<Show>` without erasing its children.
/// `when` is memoised, so the view is rebuilt only when the answer changes.
pub fn shown<V: IntoView + 'static>(
    when: impl Fn() -> bool + Send + Sync + 'static,
    view: impl Fn() -> V + Send + Sync + 'static,
) -> impl IntoView {
    let when = Memo::new(move |_| when());
    move || when.get().then(&view)
}

/// `view` while `when` holds, `otherwise` when it does not.
pub fn shown_or<V: IntoView + 'static, W: IntoView + 'static>(
    when: impl Fn() -> bool + Send + Sync + 'static,
    view: impl Fn() -> V + Send + Sync + 'static,
    otherwise: impl Fn() -> W + Send + Sync + 'static,
) -> impl IntoView {
    let when = Memo::new(move |_| when());
    move || {
        if when.get() {
            Either::Left(view())
        } else {
            Either::Right(otherwise())
        }
    }
}
