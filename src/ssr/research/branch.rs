//! One research branch (seed 004 ResearchBranch, chain of thought): search → reflect →
//! encyclopedia check → deep-read → one evidence statement.
//!
//! A branch numbers its material locally (1..n, in a private registry) so that branches
//! can run concurrently and still number deterministically: the orchestrator registers
//! each branch's rounds in the session registry in branch order and maps the local numbers
//! of its evidence to the global ones. Numbers the evidence cites that the branch never
//! showed the model are dropped here.

use std::sync::Arc;

use crate::citation::Registry;
use crate::model::Lang;
use crate::model::{Reliability, Source};
use crate::ssr::config::ResearchConfig;
use crate::ssr::fetch::{deep_read, FetchPolicy};
use crate::ssr::pipeline::Searcher;
use crate::ssr::research::thinker::{strip_markers, Candidate, Draft, Material, Planned, Thinker};
use crate::ssr::search::{ProviderKind, SearchOptions};

/// What every branch of an answer shares.
pub struct Env {
    pub thinker: Arc<dyn Thinker>,
    /// The answer's searcher: its provider, caches, files and narrowing.
    pub searcher: Searcher,
    pub fetch: Arc<FetchPolicy>,
    pub research: ResearchConfig,
    pub snippet_chars: usize,
    pub lang: Lang,
    /// The original question.
    pub question: String,
    /// Takes internal addresses out of a branch's error when people sign in.
    pub redactor: crate::ssr::config::Redactor,
}

/// A search the branch made, to be registered as one round.
#[derive(Debug, Clone)]
pub struct Round {
    pub query: String,
    pub sources: Vec<Source>,
}

/// What a finished branch hands back.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// In local-number order: the search, then the encyclopedia check.
    pub rounds: Vec<Round>,
    pub checked: Vec<String>,
    pub read: Vec<String>,
    /// With local numbers, already limited to the ones this branch saw.
    pub evidence: Option<Draft>,
    pub candidates: Vec<Candidate>,
    /// Set when the branch failed; the rest may be partial.
    pub error: Option<String>,
}

/// The SearXNG profile of a sub-question: its language and the engines configured for it.
pub fn profile(planned: &Planned, research: &ResearchConfig) -> SearchOptions {
    SearchOptions {
        language: Some(if planned.zh { "zh-CN" } else { "en" }.to_string()),
        engines: if planned.zh {
            research.engines_zh.clone()
        } else {
            research.engines_en.clone()
        },
        max_results: Some(research.results),
        snippet_chars: Some(research.snippet_chars),
        ..SearchOptions::default()
    }
}

pub async fn run(env: &Env, planned: &Planned) -> Outcome {
    let mut outcome = Outcome::default();
    // 1. Search.
    let results = match search(env, planned).await {
        Ok(results) => results,
        Err(message) => {
            outcome.error = Some(message);
            return outcome;
        }
    };
    let mut local = Registry::new();
    local.add_round(&planned.query, &results);
    let search_count = local.len() as u32;
    outcome.rounds.push(Round {
        query: planned.query.clone(),
        sources: results,
    });

    // 2. Reflect.
    let material = Material {
        sources: local.entries(),
        pages: &[],
    };
    let reflection = match env
        .thinker
        .reflect(&env.question, &planned.question, &material)
        .await
    {
        Ok(reflection) => reflection,
        Err(error) => {
            outcome.error = Some(
                env.redactor
                    .apply(&crate::ssr::messages::llm_error(env.lang, &error), env.lang),
            );
            return outcome;
        }
    };
    outcome.candidates = reflection.candidates.clone();

    // 3. Encyclopedia check of one or two named entities.
    check_entities(
        env,
        planned,
        &reflection.encyclopedia,
        &mut local,
        &mut outcome,
    )
    .await;

    // 4. Deep-read the pages the reflection pointed at, then the encyclopedia articles
    //    (seed 004 read whole encyclopedia entries: their snippets lose the tables and
    //    lists).
    let mut wanted: Vec<u32> = reflection.deep_read.clone();
    wanted.extend((search_count + 1)..=(local.len() as u32));
    wanted.dedup();
    let pages = read_pages(env, &wanted, &local, &mut outcome.read).await;

    // 5. One evidence statement, resting only on numbers this branch saw.
    let material = Material {
        sources: local.entries(),
        pages: &pages,
    };
    match env
        .thinker
        .evidence(&env.question, &planned.question, &reflection, &material)
        .await
    {
        Ok(draft) => outcome.evidence = settle(draft, local.len() as u32),
        Err(error) => {
            let message = crate::ssr::messages::llm_error(env.lang, &error);
            outcome.error = Some(env.redactor.apply(&message, env.lang));
        }
    }
    outcome
}

/// The branch's search, with the sub-question's profile; engines that find nothing fall
/// back to the instance's defaults once. A focus other than Web replaces the profile's
/// engines; the period and the site hold for every search of the branch but the
/// encyclopedia check. The conversation's files answer the sub-question too. Nothing
/// found, or a failed search, is the message the branch ends with.
async fn search(env: &Env, planned: &Planned) -> Result<Vec<Source>, String> {
    let searcher = &env.searcher;
    let web_focus = searcher.narrowing().focus == crate::model::Focus::Web;
    let mut options = profile(planned, &env.research);
    if !web_focus && searcher.kind() != ProviderKind::Knowledge {
        options.engines.clear();
    }
    let mut searched = searcher.web(&planned.query, &options).await.0;
    if matches!(&searched, Ok(results) if results.sources.is_empty())
        && !options.engines.is_empty()
        && web_focus
    {
        let plain = SearchOptions {
            engines: Vec::new(),
            ..options.clone()
        };
        tracing::debug!(query = planned.query, engines = ?options.engines, "research: profile engines found nothing; trying the defaults");
        searched = searcher.web(&planned.query, &plain).await.0;
    }
    match searcher.with_files(&planned.query, searched).await {
        Ok(results) if results.sources.is_empty() => {
            Err(env.lang.texts().research_no_results.to_string())
        }
        Ok(results) => Ok(results.sources),
        Err(error) => Err(env.redactor.apply(
            &crate::ssr::messages::search_error(env.lang, &error),
            env.lang,
        )),
    }
}

/// Looks up one or two of the entities the reflection named in the encyclopedia engines
/// and adds what they found (and the branch had not) as a round of its own. The knowledge
/// base has no encyclopedia engines: the check needs SearXNG.
async fn check_entities(
    env: &Env,
    planned: &Planned,
    named: &[String],
    local: &mut Registry,
    outcome: &mut Outcome,
) {
    let searcher = &env.searcher;
    if env.research.encyclopedia_engines.is_empty() || searcher.kind() == ProviderKind::Knowledge {
        return;
    }
    let options = SearchOptions {
        engines: env.research.encyclopedia_engines.clone(),
        language: Some(if planned.zh { "zh-CN" } else { "en" }.to_string()),
        max_results: Some(2),
        ..SearchOptions::default()
    };
    let entities: Vec<&String> = named
        .iter()
        .filter(|entity| !entity.trim().is_empty() && entity.chars().count() <= 80)
        .take(2)
        .collect();
    let lookups = futures_util::future::join_all(
        entities
            .iter()
            .map(|entity| searcher.exact(entity, &options)),
    )
    .await;
    let mut found: Vec<Source> = Vec::new();
    for (entity, (result, _)) in entities.iter().zip(lookups) {
        match result {
            Ok(results) => {
                outcome.checked.push((*entity).clone());
                for source in results.sources {
                    let known = local.entries().iter().any(|e| e.url == source.url)
                        || found.iter().any(|f| f.url == source.url);
                    if !known {
                        found.push(source);
                    }
                }
            }
            Err(error) => {
                tracing::info!(entity = entity.as_str(), %error, "research: encyclopedia check failed")
            }
        }
    }
    if !found.is_empty() {
        let t = env.lang.texts();
        let label = format!("{} {}", t.research_encyclopedia, outcome.checked.join(", "));
        local.add_round(&label, &found);
        outcome.rounds.push(Round {
            query: label,
            sources: found,
        });
    }
}

/// Reads up to `deep_reads` of the `wanted` pages (web pages only: knowledge passages are
/// whole already), returning each read page's text by its local number and noting its URL
/// in `read`.
async fn read_pages(
    env: &Env,
    wanted: &[u32],
    local: &Registry,
    read: &mut Vec<String>,
) -> Vec<(u32, String)> {
    let mut chosen: Vec<(u32, String)> = Vec::new();
    for &number in wanted {
        if chosen.len() >= env.research.deep_reads {
            break;
        }
        if let Some(entry) = local.get(number) {
            if crate::citation::urls::is_web_link(&entry.url)
                && !chosen.iter().any(|(n, _)| *n == number)
            {
                chosen.push((number, entry.url.clone()));
            }
        }
    }
    let reads =
        futures_util::future::join_all(chosen.iter().map(|(_, url)| deep_read(url, &env.fetch)))
            .await;
    let mut pages = Vec::new();
    for ((number, url), page) in chosen.into_iter().zip(reads) {
        match page {
            Ok(page) => {
                read.push(url);
                pages.push((number, page.text));
            }
            Err(error) => tracing::debug!(url, %error, "research: deep-read failed"),
        }
    }
    pages
}

/// The evidence statement as the branch hands it back: numbers written inside the
/// statement are the branch's local numbers too (they join the list, and the text keeps
/// none); numbers past the `seen` ones the branch showed the model are dropped; evidence
/// citing nothing is of low reliability; an empty statement is none.
fn settle(mut draft: Draft, seen: u32) -> Option<Draft> {
    for marker in crate::citation::markers::scan(&draft.statement) {
        for number in marker.numbers {
            if !draft.numbers.contains(&number) {
                draft.numbers.push(number);
            }
        }
    }
    draft.statement = strip_markers(&draft.statement);
    let (kept, dropped): (Vec<u32>, Vec<u32>) =
        draft.numbers.iter().partition(|n| (1..=seen).contains(*n));
    if !dropped.is_empty() {
        tracing::warn!(
            ?dropped,
            seen,
            "research: evidence cited numbers its branch never saw; dropped"
        );
    }
    draft.numbers = kept;
    if draft.numbers.is_empty() {
        draft.reliability = Reliability::Low;
    }
    (!draft.statement.trim().is_empty()).then_some(draft)
}
