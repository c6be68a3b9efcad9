//! Rendering tests: one `check` helper, one line per case, then properties over arbitrary
//! Unicode.

use expect_test::{expect, Expect};
use proptest::prelude::*;

use super::registry::tests::sources;
use super::*;

fn registry(n_sources: usize) -> Registry {
    Registry::single_round("q", &sources("s", n_sources))
}

/// A compact view of the tree: `⟦n⟧` for a resolved number, `⟦n?⟧` for an unknown one in
/// the same marker, `<url|text>` for links, then the problems.
fn debug_render(rendered: &Rendered) -> String {
    let mut out = String::new();
    for block in &rendered.blocks {
        debug_block(block, &mut out);
        out.push('\n');
    }
    for problem in &rendered.problems {
        out.push_str(&format!(
            "missing {} in {:?}\n",
            problem.number, problem.marker
        ));
    }
    out
}

fn debug_block(block: &Block, out: &mut String) {
    match block {
        Block::Paragraph(inlines) => {
            out.push_str("p: ");
            debug_inlines(inlines, out);
        }
        Block::Plain(inlines) => debug_inlines(inlines, out),
        Block::Heading { level, content } => {
            out.push_str(&format!("h{level}: "));
            debug_inlines(content, out);
        }
        Block::Quote(blocks) => {
            out.push_str("quote{ ");
            blocks.iter().for_each(|b| debug_block(b, out));
            out.push_str(" }");
        }
        Block::List { start, items } => {
            out.push_str(&match start {
                Some(start) => format!("ol({start})["),
                None => "ul[".to_string(),
            });
            for (idx, item) in items.iter().enumerate() {
                if idx > 0 {
                    out.push_str(" | ");
                }
                if let Some(checked) = item.checked {
                    out.push_str(if checked { "[x] " } else { "[ ] " });
                }
                item.blocks.iter().for_each(|b| debug_block(b, out));
            }
            out.push(']');
        }
        Block::Code { lang, code } => out.push_str(&format!("code({lang}): {code:?}")),
        Block::Table { head, rows, .. } => {
            out.push_str("table: ");
            for row in std::iter::once(head).chain(rows) {
                out.push('|');
                for cell in row {
                    debug_inlines(cell, out);
                    out.push('|');
                }
                out.push(' ');
            }
        }
        Block::Rule => out.push_str("---"),
    }
}

fn debug_inlines(inlines: &[Inline], out: &mut String) {
    for inline in inlines {
        match inline {
            Inline::Text(text) => out.push_str(text),
            Inline::Code(code) => out.push_str(&format!("`{code}`")),
            Inline::Emphasis(children) => wrap("_", children, out),
            Inline::Strong(children) => wrap("**", children, out),
            Inline::Strikethrough(children) => wrap("~~", children, out),
            Inline::Link { url, children } => {
                out.push_str(&format!("<{url}|"));
                debug_inlines(children, out);
                out.push('>');
            }
            Inline::SoftBreak => out.push('↵'),
            Inline::LineBreak => out.push('⏎'),
            Inline::Citation { cites, .. } => {
                for cite in cites {
                    match cite {
                        Cite::Found { number } => {
                            out.push_str(&format!("⟦{number}⟧"));
                        }
                        Cite::Missing { number } => out.push_str(&format!("⟦{number}?⟧")),
                        Cite::Added { number, .. } => out.push_str(&format!("⟦+{number}⟧")),
                        Cite::Unsupported => out.push_str("⟦?⟧"),
                    }
                }
            }
        }
    }
}

fn wrap(mark: &str, children: &[Inline], out: &mut String) {
    out.push_str(mark);
    debug_inlines(children, out);
    out.push_str(mark);
}

#[track_caller]
fn check(answer: &str, n_sources: usize, expect: Expect) {
    let rendered = render(answer, &registry(n_sources));
    expect.assert_eq(&debug_render(&rendered));
}

#[test]
fn plain_marker() {
    check(
        "Rust is safe [1].",
        3,
        expect![[r#"
    p: Rust is safe ⟦1⟧.
"#]],
    );
}
#[test]
fn adjacent_markers() {
    check(
        "A [1][3].",
        3,
        expect![[r#"
    p: A ⟦1⟧⟦3⟧.
"#]],
    );
}
#[test]
fn grouped_markers() {
    check(
        "B [1, 3]. A 【2】.",
        3,
        expect![[r#"
    p: B ⟦1⟧⟦3⟧. A ⟦2⟧.
"#]],
    );
}
#[test]
fn fullwidth_comma_and_range() {
    check(
        "甲[1，2]乙[1-3]。",
        3,
        expect![[r#"
    p: 甲⟦1⟧⟦2⟧乙⟦1⟧⟦2⟧⟦3⟧。
"#]],
    );
}
#[test]
fn prefixed_forms() {
    check(
        "[citation:1] [cite:2] [^3]",
        3,
        expect![[r#"
    p: ⟦1⟧ ⟦2⟧ ⟦3⟧
"#]],
    );
}
#[test]
fn out_of_range_marker_stays_text() {
    check(
        "See [9].",
        2,
        expect![[r#"
    p: See [9].
    missing 9 in "[9]"
"#]],
    );
}
#[test]
fn partly_known_group() {
    check(
        "See [2, 9].",
        2,
        expect![[r#"
    p: See ⟦2⟧⟦9?⟧.
    missing 9 in "[2, 9]"
"#]],
    );
}
#[test]
fn zero_and_leading_zeros() {
    check(
        "[0] [007] [99999999999]",
        9,
        expect![[r#"
    p: [0] [007] [99999999999]
"#]],
    );
}
#[test]
fn no_sources_no_citations() {
    check(
        "A [1].",
        0,
        expect![[r#"
    p: A [1].
    missing 1 in "[1]"
"#]],
    );
}
#[test]
fn inline_code_is_not_scanned() {
    check(
        "Use `arr[1]` here [1].",
        1,
        expect![[r#"
    p: Use `arr[1]` here ⟦1⟧.
"#]],
    );
}
#[test]
fn code_block_is_not_scanned() {
    check(
        "```rust\nlet x = v[1];\n```\nok [1]",
        1,
        expect![[r#"
    code(rust): "let x = v[1];\n"
    p: ok ⟦1⟧
"#]],
    );
}
#[test]
fn indented_code_is_not_scanned() {
    check(
        "text\n\n    v[1]\n",
        1,
        expect![[r#"
    p: text
    code(): "v[1]\n"
"#]],
    );
}
#[test]
fn inline_link_is_not_a_citation() {
    check(
        "[1](https://x.org/a) and [1]",
        1,
        expect![[r#"
    p: <https://x.org/a|1> and ⟦1⟧
"#]],
    );
}
#[test]
fn marker_inside_link_text_is_not_scanned() {
    check(
        "[see [1]](https://x.org)",
        1,
        expect![[r#"
    p: <https://x.org|see [1]>
"#]],
    );
}
#[test]
fn reference_link_is_not_a_citation() {
    check(
        "[text][1] and [1][ref]",
        1,
        expect![[r#"
    p: [text][1] and [1][ref]
"#]],
    );
}
#[test]
fn defined_reference_cannot_hijack_a_number() {
    check(
        "Fact [1].\n\n[1]: https://evil.example/",
        1,
        expect![[r#"
    p: Fact ⟦1⟧.
"#]],
    );
}
#[test]
fn numbered_list_is_not_a_citation() {
    check(
        "1. first [2]\n2. second",
        2,
        expect![[r#"
    ol(1)[first ⟦2⟧ | second]
"#]],
    );
}
#[test]
fn bracket_list_items_are_citations() {
    check(
        "要点：\n[1] 第一个要点\n[2] 第二个要点",
        2,
        expect![[r#"
    p: 要点：↵⟦1⟧ 第一个要点↵⟦2⟧ 第二个要点
"#]],
    );
}
#[test]
fn raw_html_is_text() {
    check(
        "<script>alert(1)</script>\n\nHi <img src=x onerror=alert(1)> [1]",
        1,
        expect![[r#"
    p: <script>alert(1)</script>
    p: Hi <img src=x onerror=alert(1)> ⟦1⟧
"#]],
    );
}
#[test]
fn javascript_link_loses_its_destination() {
    check(
        "[click](javascript:alert(1)) [x](data:text/html,hi) [y](//evil.example)",
        0,
        expect![[r#"
    p: click x y
"#]],
    );
}
#[test]
fn autolink_and_email() {
    check(
        "<https://example.org> <a@b.example>",
        0,
        expect![[r#"
    p: <https://example.org|https://example.org> a@b.example
"#]],
    );
}
#[test]
fn image_becomes_a_link_never_an_image() {
    check(
        "![chart](https://x.org/c.png) ![bad](javascript:x)",
        0,
        expect![[r#"
    p: <https://x.org/c.png|chart> bad
"#]],
    );
}
#[test]
fn emphasis_strong_strike() {
    check(
        "*a [1]* **b [2]** ~~c~~",
        2,
        expect![[r#"
    p: _a ⟦1⟧_ **b ⟦2⟧** ~~c~~
"#]],
    );
}
#[test]
fn headings_quotes_rules() {
    check(
        "## Title [1]\n\n> quoted [1]\n\n---",
        1,
        expect![[r#"
    h2: Title ⟦1⟧
    quote{ p: quoted ⟦1⟧ }
    ---
"#]],
    );
}
#[test]
fn tight_and_task_lists() {
    check(
        "- a [1]\n- [x] done\n- [ ] todo",
        1,
        expect![[r#"
    ul[a ⟦1⟧ | [x] done | [ ] todo]
"#]],
    );
}
#[test]
fn table_with_citations() {
    check(
        "| a | b |\n|---|---|\n| x [1] | `y[1]` |",
        1,
        expect![[r#"
    table: |a|b| |x ⟦1⟧|`y[1]`| 
"#]],
    );
}
/// Markdown resolves escapes before markers are looked for, so `\[1\]` cites too.
#[test]
fn escaped_brackets_still_cite() {
    check(
        r"not \[1\] but [1]",
        1,
        expect![[r#"
    p: not ⟦1⟧ but ⟦1⟧
"#]],
    );
}
#[test]
fn nested_and_unbalanced() {
    check(
        "[[1]] [1 [2]] ]1[ [",
        2,
        expect![[r#"
    p: [⟦1⟧] [1 ⟦2⟧] ]1[ [
"#]],
    );
}
#[test]
fn emoji_and_cjk_punctuation() {
    check(
        "🎉好的【1】，👍🏽[2]！",
        2,
        expect![[r#"
    p: 🎉好的⟦1⟧，👍🏽⟦2⟧！
"#]],
    );
}
#[test]
fn streaming_unfinished_marker() {
    check(
        "Rust is safe [1",
        1,
        expect![[r#"
    p: Rust is safe [1
"#]],
    );
}
#[test]
fn streaming_unfinished_group() {
    check(
        "Rust is safe [1, ",
        2,
        expect![[r#"
    p: Rust is safe [1,
"#]],
    );
}
#[test]
fn empty_answer() {
    check("", 1, expect![[""]]);
}

#[test]
fn a_marker_split_across_stream_chunks_resolves_once_complete() {
    let registry = registry(3);
    let answer = "量子计算[1]和经典计算[2, 3]不同。";
    let mut seen_cites = Vec::new();
    for end in answer
        .char_indices()
        .map(|(idx, _)| idx)
        .chain([answer.len()])
    {
        let partial = render(&answer[..end], &registry);
        assert!(partial.problems.is_empty(), "{end}: {:?}", partial.problems);
        seen_cites.push(partial.cited_numbers().len());
    }
    // Numbers appear only once their marker is complete, and never disappear.
    assert!(seen_cites.windows(2).all(|pair| pair[0] <= pair[1]));
    assert_eq!(seen_cites.last(), Some(&3));
}

#[test]
fn deep_nesting_is_flattened_not_fatal() {
    // Run on a small stack, like a tokio worker or the browser's wasm stack.
    let answer = format!(
        "{}deep [1]\n\n{}item [1]",
        ">".repeat(20_000),
        "- ".repeat(5_000)
    );
    let rendered = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let rendered = render(&answer, &registry(1));
            (
                rendered.text(false).contains("deep"),
                rendered.cited_numbers(),
            )
        })
        .unwrap()
        .join()
        .expect("rendering deep nesting must not overflow the stack");
    assert_eq!(rendered, (true, vec![1]));
}

#[test]
fn used_numbers_are_sorted_unique_and_registered() {
    let registry = registry(5);
    assert_eq!(
        used_numbers("b [5][2] a [2, 9] `[3]`", &registry),
        vec![2, 5]
    );
    assert_eq!(used_numbers("nothing cited", &registry), Vec::<u32>::new());
}

fn marker_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("[".to_string()),
        Just("]".to_string()),
        Just("【".to_string()),
        Just("】".to_string()),
        Just("`".to_string()),
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("```\n".to_string()),
        Just("(https://x.org)".to_string()),
        Just("<b>".to_string()),
        Just("- ".to_string()),
        Just("1. ".to_string()),
        Just("| a |\n|---|\n".to_string()),
        Just("*".to_string()),
        Just(", ".to_string()),
        Just("citation:".to_string()),
        Just("^".to_string()),
        (0u32..12).prop_map(|n| n.to_string()),
        "\\PC{0,6}",
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn rendering_loses_and_invents_no_text(answer in marker_soup(), n_sources in 0usize..8) {
        let with = render(&answer, &registry(n_sources));
        let without = render(&answer, &Registry::new());
        prop_assert_eq!(with.text(true), without.text(true));
    }

    #[test]
    fn every_cite_maps_to_its_entry(answer in marker_soup(), n_sources in 0usize..8) {
        let registry = registry(n_sources);
        let rendered = render(&answer, &registry);
        rendered.for_each_cite(|cite| {
            if let Cite::Found { number } = cite {
                assert!(registry.get(*number).is_some(), "[{number}] found without an entry");
            }
        });
        for number in used_numbers(&answer, &registry) {
            prop_assert!(registry.get(number).is_some());
        }
    }

    #[test]
    fn arbitrary_unicode_never_panics(answer in "\\PC{0,200}", n_sources in 0usize..8) {
        let registry = registry(n_sources);
        let rendered = render(&answer, &registry);
        let _ = rendered.text(true);
        let used = used_numbers(&answer, &registry);
        let _ = lists::agent_markdown(&registry, &used);
        let _ = lists::chat_markdown(&registry, &used);
        let _ = markers::scan(&answer);
    }

}
