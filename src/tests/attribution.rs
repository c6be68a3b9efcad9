//! Every claim attributed, every doubt shown (`ssr::pipeline::checking`): a claim the model
//! left uncited is matched against the answer's sources after the answer; where one
//! supports it, cited adds its own citation (shown as an addition, counted apart in the
//! coverage), where none does, the sentence is marked. The model's words never change.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;

use super::checking::{ask, judged_state, judging, page_server, state, TwoSources};
use crate::model::blocks::{Cite, Shown};
use crate::model::{AnswerEvent, ClaimCheck, Coverage, Support};

/// Three claims, none cited: the first stated by the Tokio page, the second by the other
/// source's snippet, the third by neither.
const UNCITED: &str =
    "Tokio is an asynchronous runtime for the Rust programming language, first released in 2016. \
     Rust frees memory through its ownership rules, without a garbage collector. \
     Bananas are the most popular fruit grown in Iceland today.";

fn aligned(events: &[AnswerEvent]) -> (Vec<ClaimCheck>, Option<Coverage>) {
    events
        .iter()
        .find_map(|event| match event {
            AnswerEvent::Aligned {
                claims, coverage, ..
            } => Some((claims.clone(), *coverage)),
            _ => None,
        })
        .expect("the answer is checked after Done")
}

fn cites(blocks: &[crate::model::blocks::Block]) -> Vec<Cite> {
    let mut seen = Vec::new();
    for block in blocks {
        crate::model::blocks::block_cites(block, &mut |cite: &Cite| seen.push(cite.clone()));
    }
    seen
}

#[tokio::test]
async fn uncited_claims_get_cited_s_citation_where_a_source_supports_them_and_a_mark_where_none_does(
) {
    let addr = page_server(Arc::new(AtomicUsize::new(0))).await;
    let url = format!("http://{addr}/tokio");
    let mut state = state(url.clone(), addr, "20");
    state.search = Arc::new(TwoSources { url: url.clone() });
    state.llm = super::chat::Scripted::fixed(UNCITED);
    let session = super::session();
    let events = ask(&state, &session, "Tell me about Tokio").await;

    let (claims, coverage) = aligned(&events);
    let seen: Vec<(u32, Option<(u32, Support)>)> = claims
        .iter()
        .map(|c| (c.sentence, c.added.as_ref().map(|a| (a.number, a.support))))
        .collect();
    assert_eq!(
        seen,
        vec![
            (0, Some((1, Support::Supported))),
            (1, Some((2, Support::Supported))),
            (2, None),
        ],
        "{claims:#?}"
    );
    assert!(claims[2].text.starts_with("Bananas"), "{claims:?}");
    // The page, read: its passage, with where it stands.
    let page = claims[0].added.as_ref().expect("added");
    assert!(
        page.passage.starts_with("Tokio is an asynchronous runtime"),
        "{page:?}"
    );
    assert!(page.offset.is_some(), "{page:?}");
    // Each addition is keyed by its claim's place among the claims.
    assert_eq!(claims[1].added.as_ref().map(|a| a.ordinal), Some(1));
    // The coverage counts the additions as cited, and apart.
    assert_eq!(
        coverage,
        Some(Coverage {
            claims: 3,
            cited: 2,
            added: 2
        })
    );
    let done_coverage = events.iter().find_map(|e| match e {
        AnswerEvent::Done { coverage, .. } => *coverage,
        _ => None,
    });
    assert_eq!(done_coverage.map(|c| (c.cited, c.added)), Some((0, 0)));

    // Kept with the exchange; the model's words are untouched.
    let saved = session.conversation().pop().expect("saved");
    assert_eq!(saved.answer, UNCITED);
    assert_eq!(saved.claims, claims);
    assert_eq!(saved.coverage, coverage);
    assert!(
        saved.cited.is_empty(),
        "the model cited nothing: {:?}",
        saved.cited
    );

    // On its way to a browser the additions follow their sentences.
    let shown = crate::citation::render::for_browser(saved.clone());
    assert_eq!(
        cites(&shown.rendered),
        vec![
            Cite::Added { number: 1, key: 0 },
            Cite::Added { number: 2, key: 1 },
            Cite::Unsupported,
        ]
    );
    // A browser that watched the answer stream sees the same, from the stream's patches.
    let lines: Vec<String> = {
        use futures_util::StreamExt;
        crate::ssr::framing::lines(futures_util::stream::iter(events.clone()))
            .collect()
            .await
    };
    let mut decoder = crate::model::LineDecoder::default();
    let mut browser = Shown::default();
    for event in decoder.push(lines.concat().as_bytes()) {
        if let AnswerEvent::Rendered { patch } = event {
            browser.apply(patch);
        }
    }
    assert_eq!(browser.blocks(), shown.rendered);
}

#[tokio::test]
async fn the_judge_attributes_a_claim_the_offline_checker_cannot_and_its_quote_must_be_in_the_source(
) {
    const PARAPHRASE: &str = "Tokio first shipped in 2016 to let people run async Rust code.";
    let addr = page_server(Arc::new(AtomicUsize::new(0))).await;
    let quoted =
        r#"{"verdicts":[{"id":1,"verdict":"supported","quote":"first released in 2016"}]}"#;
    let invented = r#"{"verdicts":[{"id":1,"verdict":"supported","quote":"shipped in 2016 to run async code"}]}"#;
    let mut added = Vec::new();
    for verdicts in [quoted, invented] {
        let (mut state, _) = judged_state(addr, verdicts, Duration::ZERO, "20");
        let model = judging(PARAPHRASE, verdicts, Duration::ZERO);
        state.llm = Arc::clone(&model) as Arc<dyn crate::ssr::llm::ChatModel>;
        let session = super::session();
        let events = ask(&state, &session, "When did Tokio ship?").await;
        assert_eq!(
            model.asked(crate::ssr::config::CallKind::Check),
            1,
            "one call judges it"
        );
        let (claims, _) = aligned(&events);
        added.push(
            claims
                .first()
                .and_then(|c| c.added.as_ref())
                .map(|a| (a.number, a.passage.clone())),
        );
    }
    // With a quote from the page: cited's citation, its passage the quote's sentence.
    let (number, passage) = added[0].clone().expect("the judge's verdict attributes it");
    assert_eq!(number, 1);
    assert!(passage.contains("first released in 2016"), "{passage}");
    // A quote the page does not hold voids the verdict: nothing is added on its word.
    assert_eq!(added[1], None);
}
