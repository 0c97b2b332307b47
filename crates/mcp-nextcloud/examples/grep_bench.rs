//! `files_grep` at scale: how fast the passage index fills, how big it gets,
//! and what a search costs next to the raw FTS5 query it starts with — for
//! a user who reads everything and for one who reads 0.1 % of the corpus.
//!
//! Run it with
//!
//! ```text
//! cargo run --release -p mcp-nextcloud --example grep_bench
//! cargo run --release -p mcp-nextcloud --example grep_bench -- --passages 10000,100000 --queries 200 --seed 20261130
//! ```
//!
//! For each corpus size, in one run:
//!
//! 1. It generates a seeded corpus of Markdown and plain-text documents in
//!    French and English (headings such as `## 3.2 Budget`, `§4. Calendrier`,
//!    `Article 7 – Obligations`; paragraphs drawn from a Zipf-distributed
//!    vocabulary of 2 000 words per language, accented words included) until
//!    [`chunk::chunk`] — the server's own cutter — has produced the asked
//!    number of passages.
//! 2. It seeds the fake Nextcloud with one file per document, owned by
//!    `alice`; 0.1 % of them sit in a folder shared read-only with `bob`.
//!    File contents are tiny: the index already holds the passages. The
//!    file ids, etags and paths come from a real discovery SEARCH as alice.
//! 3. It fills a file-backed `index.db` through the store API, as a pass
//!    does (`record_seen` in transactions of a discovery page, then
//!    `record_passages` once per document), single-threaded, and measures
//!    its size after `PRAGMA wal_checkpoint(TRUNCATE)`.
//! 4. It runs the same queries (one to three vocabulary words of mixed
//!    frequency) interleaved: the FTS5 candidate query alone (the baseline:
//!    `store::candidates`, with the OR fallback `search` uses), then
//!    `index::search::search` as alice, as alice restricted to the shared
//!    folder, and as bob — each with the batched permission check against
//!    the fake over loopback HTTP (app-password Basic auth, so no JWT is
//!    validated: the `bench` example measures that). Nextcloud requests are
//!    counted by a middleware on a second listener serving the fake's own
//!    router, which the clients use.
//! 5. It times the steps of alice's searches apart (permission SEARCH,
//!    snippets, the `record_seen`/`record_query` writes, and the same
//!    writes in one transaction), replaying the permission rounds `search`
//!    ran for the folder case and asserting it sent as many requests.
//! 6. It computes the truth by brute force (its own tokenizer, asserted
//!    equal to FTS5's candidate count for every query): alice's page must
//!    be exactly what exists, bob may see only shared files, and it counts
//!    how often bob got a full page when his files hold one.
//!
//! It prints one table per corpus size, e.g. (100 000 passages, a shared
//! 2-core machine; see docs/benchmarks.md)
//!
//! ```text
//! row                                               p50 ms    p99 ms   mean ms  ×FTS p50  ×FTS p99    NC req/call
//! FTS5 candidates (baseline)                         2.195    39.817     6.074      1.00      1.00      0.0 (  0)
//! files_grep as alice (reads all)                   20.433    58.990    24.812      9.31      1.48      1.0 (  1)
//! files_grep as bob (reads 15 of 14253 files)        3.433    55.726    10.093      1.56      1.40     16.7 ( 56)
//! ```
//!
//! where "NC req/call" is the mean (and max) number of Nextcloud requests
//! per search. Any failed search or broken assertion aborts the run.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use fake_nextcloud::fixture::{FileFixture, ShareFixture, UserFixture};
use fake_nextcloud::{FakeNextcloud, Fixture};
use mcp_nextcloud::bearer::{Caller, UpstreamCredential};
use mcp_nextcloud::index::embed::{Embedder, EmbeddingsConfig};
use mcp_nextcloud::index::query::FtsQuery;
use mcp_nextcloud::index::search::{
    self, CANDIDATES_MAX, CHECK_FIRST, CHECK_GROWTH, CHECK_ROUNDS_MAX, Fusion,
    PASSAGES_PER_FILE_MAX,
};
use mcp_nextcloud::index::store::{self, NewPassage, SeenFile};
use mcp_nextcloud::index::visible::CHECK_BATCH_MAX;
use mcp_nextcloud::index::{Index, IndexConfig, Limits, chunk, fill, visible, words};
use mcp_nextcloud::nextcloud::Nextcloud;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const PASSAGES_DEFAULT: &[usize] = &[10_000, 100_000];
const QUERIES_DEFAULT: usize = 200;
const SEED_DEFAULT: u64 = 20_261_130;
/// Words per language; the first ones are real, the rest synthetic.
const VOCABULARY_PER_LANGUAGE: usize = 2_000;
const ZIPF_EXPONENT: f64 = 1.0;
/// The share of documents bob can read.
const READABLE_FRACTION: f64 = 0.001;
/// `files_grep`'s default page.
const PAGE_LIMIT: usize = 10;
/// Searches of each kind run before measuring (connections, caches).
const WARMUP_QUERIES: usize = 20;
/// Documents per project folder in alice's tree.
const FOLDER_DOCUMENTS: usize = 64;
/// Files per discovery SEARCH while collecting the fake's metadata.
const DISCOVERY_PAGE: usize = 5_000;
const OWNER: &str = "alice";
const READER: &str = "bob";
const SHARED_FOLDER: &str = "Partage";
/// The largest corpus accepted: file ids and memory stay reasonable.
const PASSAGES_MAX: usize = 2_000_000;

struct Args {
    passages: Vec<usize>,
    queries: usize,
    seed: u64,
    /// Also time files_grep with embeddings on.
    embeddings: bool,
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    println!(
        "files_grep benchmark: seed {}, {} queries per corpus, {} CPUs",
        args.seed,
        args.queries,
        std::thread::available_parallelism().map(usize::from).unwrap_or(0)
    );
    for &passages in &args.passages {
        let report = run(passages, args.queries, args.seed, args.embeddings).await;
        report.print();
    }
}

fn parse_args() -> Args {
    let usage = "usage: grep_bench [--passages N[,N...]] [--queries N] [--seed N] [--embeddings]";
    let mut parsed = Args {
        passages: PASSAGES_DEFAULT.to_vec(),
        queries: QUERIES_DEFAULT,
        seed: SEED_DEFAULT,
        embeddings: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--embeddings" {
            parsed.embeddings = true;
            continue;
        }
        let value = args.next();
        let valid = match (arg.as_str(), value.as_deref()) {
            ("--passages", Some(value)) => value
                .split(',')
                .map(|count| count.trim().parse::<usize>().ok())
                .collect::<Option<Vec<usize>>>()
                .filter(|counts| counts.iter().all(|count| (1..=PASSAGES_MAX).contains(count)))
                .map(|counts| parsed.passages = counts)
                .is_some(),
            ("--queries", Some(value)) => value
                .parse::<usize>()
                .ok()
                .filter(|count| *count > 0)
                .map(|count| parsed.queries = count)
                .is_some(),
            ("--seed", Some(value)) => {
                value.parse::<u64>().ok().map(|seed| parsed.seed = seed).is_some()
            }
            _ => false,
        };
        if !valid {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
    parsed
}

// ---- the corpus ------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    French,
    English,
}

/// Words by rank, with the cumulative Zipf weights to draw them.
struct Vocabulary {
    words: Vec<String>,
    cumulative: Vec<f64>,
    headings: &'static [&'static str],
}

impl Vocabulary {
    fn draw(&self, rng: &mut StdRng) -> &str {
        let total = *self.cumulative.last().expect("a vocabulary has words");
        let point = rng.gen_range(0.0..total);
        let rank = self.cumulative.partition_point(|weight| *weight < point);
        &self.words[rank.min(self.words.len() - 1)]
    }
}

const FRENCH_COMMON: &str = "de la le et les des en un du une que est pour qui dans par sur au plus \
pas ne avec il se ce sont nous vous elle ou son sa ses mais comme aux cette été être fait tout leur \
bien peut aussi sans même entre après deux très faire donc où avant ainsi";
const FRENCH_CONTENT: &str = "projet réunion budget équipe données sécurité calendrier objectifs \
risques présentation résultats méthode analyse rapport prévisionnel délai livraison contrat client \
partenaire fournisseur facture montant dépense recette trésorerie comptabilité gestion \
développement déploiement serveur logiciel réseau utilisateur accès sauvegarde chiffrement \
authentification règlement article annexe comité direction décision validation étape phase jalon \
planning année mois semaine trimestre financement subvention évaluation qualité performance \
stratégie communication formation recrutement salarié entreprise société marché produit service \
demande réponse problème solution amélioration procédure document fichier version modification \
création bâtiment électricité chauffage matériel achat commande stock inventaire congés absence \
médecin santé hôpital école élève enseignant mairie conseil délibération élection";
const FRENCH_HEADINGS: &[&str] = &[
    "Budget",
    "Calendrier",
    "Objectifs",
    "Risques",
    "Sécurité",
    "Présentation",
    "Contexte",
    "Méthodologie",
    "Résultats",
    "Gouvernance",
    "Livrables",
    "Équipe projet",
    "Conclusion",
    "Données personnelles",
    "Réunion de lancement",
    "Budget prévisionnel",
    "Modalités",
    "Obligations des parties",
    "Périmètre",
    "Annexes techniques",
];
const ENGLISH_COMMON: &str = "the of and to a in is that for it as with was on be by this are or \
from at an not have which but they has their can will more one all been also its other new were \
there when if would about what so we these";
const ENGLISH_CONTENT: &str = "project meeting budget team data security schedule goals risks \
presentation results method analysis report forecast deadline delivery contract customer partner \
supplier invoice amount expense revenue cash accounting management development deployment server \
software network user access backup encryption authentication policy article appendix committee \
board decision approval step phase milestone planning year month week quarter funding grant review \
quality performance strategy communication training hiring employee company market product service \
request answer issue solution improvement procedure document file version change release building \
electricity heating hardware purchase order stock inventory leave absence doctor health hospital \
school pupil teacher council election";
const ENGLISH_HEADINGS: &[&str] = &[
    "Budget",
    "Schedule",
    "Goals",
    "Risks",
    "Security",
    "Scope",
    "Background",
    "Method",
    "Results",
    "Governance",
    "Deliverables",
    "Project team",
    "Summary",
    "Next steps",
    "Data protection",
    "Kick-off meeting",
    "Two-factor authentication",
    "Obligations",
    "Pricing",
    "Technical appendix",
];

/// Both vocabularies: common words first, real content words spread over
/// the ranks below them (every eighth rank), synthetic words in between,
/// so real words come in every frequency.
fn vocabularies(rng: &mut StdRng) -> (Vocabulary, Vocabulary) {
    let mut taken: HashSet<String> = HashSet::new();
    for word in [FRENCH_COMMON, FRENCH_CONTENT, ENGLISH_COMMON, ENGLISH_CONTENT]
        .iter()
        .flat_map(|words| words.split_whitespace())
    {
        taken.insert(normalize(word));
    }
    let french = vocabulary(
        FRENCH_COMMON,
        FRENCH_CONTENT,
        FRENCH_HEADINGS,
        Language::French,
        rng,
        &mut taken,
    );
    let english = vocabulary(
        ENGLISH_COMMON,
        ENGLISH_CONTENT,
        ENGLISH_HEADINGS,
        Language::English,
        rng,
        &mut taken,
    );
    (french, english)
}

fn vocabulary(
    common: &str,
    content: &str,
    headings: &'static [&'static str],
    language: Language,
    rng: &mut StdRng,
    taken: &mut HashSet<String>,
) -> Vocabulary {
    let mut words: Vec<String> = common.split_whitespace().map(str::to_string).collect();
    let mut content = content.split_whitespace();
    while words.len() < VOCABULARY_PER_LANGUAGE {
        let word = match words.len() % 8 {
            0 => content.next().map(str::to_string),
            _ => None,
        };
        words.push(word.unwrap_or_else(|| synthetic_word(language, rng, taken)));
    }
    let mut cumulative = Vec::with_capacity(words.len());
    let mut total = 0.0;
    for rank in 1..=words.len() {
        total += 1.0 / (rank as f64).powf(ZIPF_EXPONENT);
        cumulative.push(total);
    }
    Vocabulary { words, cumulative, headings }
}

/// A pronounceable word no other word folds to.
fn synthetic_word(language: Language, rng: &mut StdRng, taken: &mut HashSet<String>) -> String {
    let (onsets, vowels, codas): (&[&str], &[&str], &[&str]) = match language {
        Language::French => (
            &[
                "b", "br", "c", "ch", "d", "f", "g", "gr", "l", "m", "n", "p", "pr", "r", "s", "t",
                "tr", "v",
            ],
            &["a", "e", "i", "o", "u", "é", "è", "ou", "ai", "eau", "on", "an", "ê", "â"],
            &["", "", "", "n", "r", "s", "l", "t", "ç"],
        ),
        Language::English => (
            &[
                "b", "bl", "c", "cr", "d", "f", "fl", "g", "h", "k", "l", "m", "n", "p", "pl", "r",
                "s", "sh", "st", "t", "th", "w",
            ],
            &["a", "e", "i", "o", "u", "ee", "oo", "ay", "ow"],
            &["", "", "n", "r", "s", "t", "ck", "ng", "ll"],
        ),
    };
    // The space of words is far larger than the vocabulary; the bound only
    // turns a bug into a panic.
    for _ in 0..10_000 {
        let syllables = rng.gen_range(2..=4);
        let mut word = String::new();
        for syllable in 0..syllables {
            word.push_str(onsets[rng.gen_range(0..onsets.len())]);
            word.push_str(vowels[rng.gen_range(0..vowels.len())]);
            if syllable + 1 == syllables {
                word.push_str(codas[rng.gen_range(0..codas.len())]);
            }
        }
        // "ç" only before a vowel in French; at a word's end it reads as "s".
        let word = word.replace("ç", "s");
        if word.chars().count() >= 4 && taken.insert(normalize(&word)) {
            return word;
        }
    }
    panic!("no new synthetic word after 10 000 tries");
}

/// One generated document.
struct Document {
    path: String,
    text: String,
    passages: Vec<chunk::Passage>,
}

/// A passage as the brute-force search sees it: its document and the
/// ids of its stems (text and heading, in the document's language, as the
/// index stores them), sorted, deduplicated.
struct PassageTokens {
    document: usize,
    tokens: Vec<u32>,
}

struct Corpus {
    documents: Vec<Document>,
    passages: Vec<PassageTokens>,
    /// Stem (in its document's language) → id.
    token_ids: HashMap<String, u32>,
    /// Documents bob can read.
    shared: HashSet<usize>,
    passage_text_bytes: usize,
    chunk_time: Duration,
}

fn generate(
    passage_count: usize,
    french: &Vocabulary,
    english: &Vocabulary,
    rng: &mut StdRng,
) -> Corpus {
    let mut documents = Vec::new();
    let mut passages = Vec::with_capacity(passage_count);
    let mut token_ids: HashMap<String, u32> = HashMap::new();
    let mut passage_text_bytes = 0;
    let mut chunk_time = Duration::ZERO;
    while passages.len() < passage_count {
        let language = if rng.gen_bool(0.5) { Language::French } else { Language::English };
        let vocabulary = match language {
            Language::French => french,
            Language::English => english,
        };
        let markdown = rng.gen_bool(0.6);
        let text = document_text(vocabulary, language, markdown, rng);
        let started = Instant::now();
        let cut = chunk::chunk(&text);
        chunk_time += started.elapsed();
        let number = documents.len();
        // As `store::record_passages` reads them: the document's language
        // from its passages, each passage's stems (text and heading) in it.
        let detected = words::detect_in(cut.iter().map(|passage| &text[passage.range()]));
        for passage in &cut {
            passage_text_bytes += passage.length;
            let heading_stems =
                passage.heading.as_deref().map(|heading| words::stems(heading, detected));
            let mut tokens: Vec<u32> = words::stems(&text[passage.range()], detected)
                .split(' ')
                .chain(heading_stems.as_deref().into_iter().flat_map(|stems| stems.split(' ')))
                .filter(|stem| !stem.is_empty())
                .map(|stem| {
                    let next = token_ids.len() as u32;
                    *token_ids.entry(stem.to_string()).or_insert(next)
                })
                .collect();
            tokens.sort_unstable();
            tokens.dedup();
            passages.push(PassageTokens { document: number, tokens });
        }
        let extension = if markdown { "md" } else { "txt" };
        documents.push(Document {
            path: format!("Projets/p{:04}/note-{number:06}.{extension}", number / FOLDER_DOCUMENTS),
            text,
            passages: cut,
        });
    }
    // Bob's documents move to the shared folder.
    let shared_count = ((documents.len() as f64 * READABLE_FRACTION).ceil() as usize).max(1);
    let shared: HashSet<usize> =
        rand::seq::index::sample(rng, documents.len(), shared_count).into_iter().collect();
    for &number in &shared {
        let name = documents[number].path.rsplit('/').next().expect("a file name").to_string();
        documents[number].path = format!("{SHARED_FOLDER}/{name}");
    }
    Corpus { documents, passages, token_ids, shared, passage_text_bytes, chunk_time }
}

fn document_text(
    vocabulary: &Vocabulary,
    language: Language,
    markdown: bool,
    rng: &mut StdRng,
) -> String {
    let mut text = String::new();
    let title = format!(
        "{} {} {}",
        vocabulary.headings[rng.gen_range(0..vocabulary.headings.len())],
        vocabulary.draw(rng),
        vocabulary.draw(rng)
    );
    match markdown {
        true => text.push_str(&format!("# {title}\n\n")),
        false => text.push_str(&format!("{title}\n\n")),
    }
    let sections = rng.gen_range(1..=8);
    for section in 1..=sections {
        let heading = vocabulary.headings[rng.gen_range(0..vocabulary.headings.len())];
        let sub = rng.gen_range(1..=3);
        let line = match (markdown, rng.gen_range(0..4), language) {
            (true, 0, _) => format!("## {heading}"),
            (true, 1, _) => format!("### {section}.{sub} {heading}"),
            (true, _, _) => format!("## {section}.{sub} {heading}"),
            (false, 0, _) => format!("Article {section} – {heading}"),
            (false, 1, _) => format!("§{section}. {heading}"),
            (false, 2, _) => format!("{section}.{sub} {heading}"),
            (false, _, Language::French) => format!("Chapitre {section} : {heading}"),
            (false, _, Language::English) => format!("Section {section} – {heading}"),
        };
        text.push_str(&line);
        text.push_str("\n\n");
        for _ in 0..rng.gen_range(1..=4) {
            let sentences: Vec<String> =
                (0..rng.gen_range(2..=8)).map(|_| sentence(vocabulary, rng)).collect();
            text.push_str(&sentences.join(" "));
            text.push_str("\n\n");
        }
    }
    text
}

fn sentence(vocabulary: &Vocabulary, rng: &mut StdRng) -> String {
    let mut sentence = String::new();
    for position in 0..rng.gen_range(6..=22) {
        let word = vocabulary.draw(rng);
        if position == 0 {
            let mut characters = word.chars();
            let first = characters.next().expect("words are not empty");
            sentence.extend(first.to_uppercase());
            sentence.push_str(characters.as_str());
        } else {
            if rng.gen_bool(0.06) {
                sentence.push(',');
            }
            sentence.push(' ');
            sentence.push_str(word);
        }
    }
    sentence.push('.');
    sentence
}

/// What FTS5's `unicode61 remove_diacritics 2` makes of the characters
/// this corpus uses: lower case, accents removed, split at anything that
/// is not a letter or digit. Checked against FTS5 for every query.
fn fold_tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(normalize)
}

fn normalize(word: &str) -> String {
    word.chars()
        .flat_map(char::to_lowercase)
        .map(|character| match character {
            'à' | 'â' | 'ä' | 'á' => 'a',
            'ç' => 'c',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'î' | 'ï' | 'í' => 'i',
            'ô' | 'ö' | 'ó' => 'o',
            'ù' | 'û' | 'ü' | 'ú' => 'u',
            'ÿ' => 'y',
            other => other,
        })
        .collect()
}

// ---- queries ---------------------------------------------------------------

struct BenchQuery {
    text: String,
    /// Per content word, the ids of the stems that match it (empty for a
    /// word the corpus never uses).
    terms: Vec<Vec<u32>>,
}

/// One to three words, each drawn from a frequency band: frequent (the 30
/// commonest words), middle (ranks 30–400) or rare (400–2 000).
fn queries(
    count: usize,
    french: &Vocabulary,
    english: &Vocabulary,
    token_ids: &HashMap<String, u32>,
    rng: &mut StdRng,
) -> Vec<BenchQuery> {
    (0..count)
        .map(|_| {
            let vocabulary = if rng.gen_bool(0.5) { french } else { english };
            let word_count = match rng.gen_range(0..10) {
                0..=3 => 1,
                4..=7 => 2,
                _ => 3,
            };
            let words: Vec<&str> = (0..word_count)
                .map(|_| {
                    let ranks = match rng.gen_range(0..10) {
                        0..=1 => 0..30,
                        2..=5 => 30..400,
                        _ => 400..vocabulary.words.len(),
                    };
                    vocabulary.words[rng.gen_range(ranks)].as_str()
                })
                .collect();
            let text = words.join(" ");
            for word in &words {
                let folded: Vec<String> = fold_tokens(word).collect();
                assert_eq!(folded.len(), 1, "vocabulary words are one token: {word}");
            }
            // What FTS5 is asked: each content word (stop words left out,
            // as the server leaves them out) by any language's stem of it.
            let parsed = FtsQuery::parse(&text).expect("queries have words");
            let terms = parsed
                .term_stems()
                .iter()
                .map(|languages| {
                    let mut ids: Vec<u32> = languages
                        .iter()
                        .filter_map(|stems| stems.first())
                        .filter_map(|stem| token_ids.get(stem).copied())
                        .collect();
                    ids.sort_unstable();
                    ids.dedup();
                    ids
                })
                .collect();
            BenchQuery { text, terms }
        })
        .collect()
}

/// What a brute-force search finds for one query.
struct Truth {
    /// Passages FTS5 should propose (before `CANDIDATES_MAX`).
    matching: usize,
    /// Passages a page could hold for each user: at most
    /// [`PASSAGES_PER_FILE_MAX`] per readable file.
    page_alice: usize,
    page_bob: usize,
}

fn truth(corpus: &Corpus, query: &BenchQuery) -> Truth {
    let contains = |passage: &PassageTokens, term: &Vec<u32>| {
        term.iter().any(|id| passage.tokens.binary_search(id).is_ok())
    };
    let all = |passage: &PassageTokens| query.terms.iter().all(|term| contains(passage, term));
    let any = |passage: &PassageTokens| query.terms.iter().any(|term| contains(passage, term));
    // `search` falls back to OR when no passage the user can read has
    // every word: alice reads all, bob the shared documents.
    let shared = |passage: &&PassageTokens| corpus.shared.contains(&passage.document);
    let use_all = query.terms.len() == 1 || corpus.passages.iter().any(all);
    let bob_all = query.terms.len() == 1 || corpus.passages.iter().filter(shared).any(all);
    let page = |passages: &mut dyn Iterator<Item = &PassageTokens>, use_all: bool| {
        let mut per_document: HashMap<usize, usize> = HashMap::new();
        let mut matching = 0;
        for passage in passages {
            if if use_all { all(passage) } else { any(passage) } {
                matching += 1;
                *per_document.entry(passage.document).or_default() += 1;
            }
        }
        let on_page: usize =
            per_document.values().map(|count| (*count).min(PASSAGES_PER_FILE_MAX)).sum();
        (matching, on_page)
    };
    let (matching, page_alice) = page(&mut corpus.passages.iter(), use_all);
    let (_, page_bob) = page(&mut corpus.passages.iter().filter(shared), bob_all);
    Truth { matching, page_alice, page_bob }
}

// ---- the fake and its request counter --------------------------------------

#[derive(Default)]
struct Counter {
    requests: AtomicU64,
}

impl Counter {
    fn read(&self) -> u64 {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Counts every request the fake's router serves.
async fn count_requests(
    State(counter): State<Arc<Counter>>,
    request: Request,
    next: Next,
) -> Response {
    counter.requests.fetch_add(1, Ordering::SeqCst);
    next.run(request).await
}

fn user(uid: &str) -> UserFixture {
    UserFixture {
        uid: uid.to_string(),
        display_name: None,
        password: format!("{uid}-password"),
        app_passwords: vec![format!("{uid}-app-password")],
        email: None,
        groups: Vec::new(),
        language: None,
        timezone: None,
        quota_bytes: None,
    }
}

fn fixture(corpus: &Corpus) -> Fixture {
    Fixture {
        users: vec![user(OWNER), user(READER)],
        files: corpus
            .documents
            .iter()
            .map(|document| FileFixture {
                owner: OWNER.to_string(),
                path: document.path.clone(),
                content: Some(document.text.lines().next().unwrap_or_default().to_string()),
                source: None,
                mtime: None,
                mime: None,
                favorite: false,
            })
            .collect(),
        shares: vec![ShareFixture {
            owner: OWNER.to_string(),
            path: SHARED_FOLDER.to_string(),
            share_with: Some(READER.to_string()),
            share_with_group: None,
            permissions: 1,
            target: None,
        }],
        ..Fixture::default()
    }
}

fn client(base_url: &str, uid: &str) -> Nextcloud {
    let http = reqwest::Client::builder()
        .timeout(mcp_nextcloud::nextcloud::REQUEST_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("HTTP client");
    let caller = Caller {
        uid: uid.to_string(),
        upstream: UpstreamCredential::Basic {
            uid: uid.to_string(),
            password: format!("{uid}-app-password"),
        },
        expires: i64::MAX,
    };
    Nextcloud::new(base_url, http, &caller)
}

/// Every file `nextcloud`'s user can see, as discovery reads them.
async fn discover_all(nextcloud: &Nextcloud) -> Vec<SeenFile> {
    let mut files = Vec::new();
    // Bounded by the corpus: PASSAGES_MAX documents at most.
    for page in 0..=(PASSAGES_MAX / DISCOVERY_PAGE) {
        let found = visible::changed_since(nextcloud, 0, page * DISCOVERY_PAGE, DISCOVERY_PAGE)
            .await
            .unwrap_or_else(|failure| panic!("discovery failed: {}", failure.message));
        let full = found.len() == DISCOVERY_PAGE;
        files.extend(found.iter().map(fill::seen_file));
        if !full {
            return files;
        }
    }
    panic!("discovery found more files than the corpus has");
}

// ---- one corpus size -------------------------------------------------------

struct Report {
    passages: usize,
    documents: usize,
    shared_documents: usize,
    queries: usize,
    passage_text_bytes: usize,
    chunk_time: Duration,
    seen_time: Duration,
    passages_time: Duration,
    database_bytes: u64,
    wal_bytes: u64,
    baseline: Samples,
    alice: Samples,
    bob: Samples,
    alice_check: Samples,
    alice_hits: Samples,
    alice_writes: Samples,
    alice_writes_batched: Samples,
    alice_folder: Samples,
    folder_checks: Samples,
    folder_writes: Samples,
    folder_writes_batched: Samples,
    /// Files the folder search found readable, per query.
    folder_survivors: Vec<usize>,
    bob_search: Samples,
    fts_candidates: Vec<usize>,
    pages: PageCounts,
    meaning: Option<Meaning>,
}

#[derive(Default)]
struct Samples {
    durations: Vec<Duration>,
    requests: Vec<u64>,
}

impl Samples {
    fn push(&mut self, duration: Duration, requests: u64) {
        self.durations.push(duration);
        self.requests.push(requests);
    }

    fn percentile(&self, fraction: f64) -> f64 {
        let mut sorted = self.durations.clone();
        sorted.sort_unstable();
        let index = ((sorted.len() as f64 * fraction) as usize).min(sorted.len() - 1);
        milliseconds(sorted[index])
    }

    fn mean(&self) -> f64 {
        milliseconds(self.durations.iter().sum::<Duration>()) / self.durations.len().max(1) as f64
    }

    fn requests_mean(&self) -> f64 {
        self.requests.iter().sum::<u64>() as f64 / self.requests.len().max(1) as f64
    }

    fn requests_max(&self) -> u64 {
        self.requests.iter().copied().max().unwrap_or(0)
    }
}

#[derive(Default)]
struct PageCounts {
    /// Queries where alice could get a full page, and how often she did.
    alice_possible: usize,
    alice_full: usize,
    /// Queries where bob's readable files hold a full page, and how often
    /// he got one.
    bob_possible: usize,
    bob_full: usize,
    /// Queries where bob's readable files hold 1–9 passages, and how often
    /// he got all of them.
    bob_partial: usize,
    bob_partial_complete: usize,
    /// Queries where bob got less than his readable files hold.
    bob_short: Vec<String>,
    /// Alice searching only the shared folder: the same truth as bob's.
    folder_possible: usize,
    folder_full: usize,
}

async fn run(passage_count: usize, query_count: usize, seed: u64, embeddings: bool) -> Report {
    let mut rng = StdRng::seed_from_u64(seed);
    let (french, english) = vocabularies(&mut rng);
    let corpus = generate(passage_count, &french, &english, &mut rng);
    let bench_queries = queries(query_count, &french, &english, &corpus.token_ids, &mut rng);
    eprintln!(
        "[{passage_count}] corpus: {} documents, {} passages, {:.1} MB of passage text; starting the fake",
        corpus.documents.len(),
        corpus.passages.len(),
        corpus.passage_text_bytes as f64 / 1e6
    );

    // The fake, with a counted router of its own on a second listener.
    let fake = FakeNextcloud::start(&fixture(&corpus), fake_nextcloud::Config::default())
        .await
        .expect("the fake Nextcloud starts");
    let counter = Arc::new(Counter::default());
    let router = fake_nextcloud::router(fake.shared.clone())
        .layer(axum::middleware::from_fn_with_state(counter.clone(), count_requests));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
    let base_url = format!("http://{}", listener.local_addr().expect("bound address"));
    let counted = tokio::spawn(async move {
        axum::serve(listener, router).await.expect("the counted listener serves");
    });
    let alice = client(&base_url, OWNER);
    let bob = client(&base_url, READER);

    // What discovery would record: fake file ids, etags, alice's paths.
    let seen = discover_all(&alice).await;
    assert_eq!(seen.len(), corpus.documents.len(), "alice sees every document");
    let bob_seen = discover_all(&bob).await;
    assert_eq!(bob_seen.len(), corpus.shared.len(), "bob sees the shared documents");
    let by_path: HashMap<&str, usize> = corpus
        .documents
        .iter()
        .enumerate()
        .map(|(number, document)| (document.path.as_str(), number))
        .collect();
    let mut fileids = vec![0u64; corpus.documents.len()];
    let mut seen_by_document: Vec<Option<SeenFile>> = vec![None; corpus.documents.len()];
    for file in seen {
        let number = by_path[file.path.as_str()];
        fileids[number] = file.fileid;
        seen_by_document[number] = Some(file);
    }
    let seen_by_document: Vec<SeenFile> =
        seen_by_document.into_iter().map(|file| file.expect("every document discovered")).collect();
    let shared_fileids: HashSet<u64> =
        corpus.shared.iter().map(|number| fileids[*number]).collect();

    // Fill a file-backed index.db.
    let directory = std::env::temp_dir()
        .join(format!("tamebi-grep-bench-{}-{passage_count}", std::process::id()));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).expect("a temporary directory");
    let database = directory.join("index.db");
    let index = Index::open(
        &IndexConfig {
            path: Some(database.clone()),
            webhook_secret: None,
            limits: Limits::default(),
            embeddings: None,
            fusion: Default::default(),
        },
        None,
    )
    .expect("index.db opens");
    eprintln!("[{passage_count}] filling {}", database.display());
    let now = mcp_nextcloud::index::now();
    let started = Instant::now();
    for page in seen_by_document.chunks(Limits::default().discovery_page) {
        index
            .store()
            .run_blocking(|connection| {
                let transaction = connection.transaction()?;
                for file in page {
                    store::record_seen(&transaction, file, now)?;
                }
                transaction.commit()?;
                Ok(())
            })
            .expect("record_seen");
    }
    let seen_time = started.elapsed();
    let mut passages_time = Duration::ZERO;
    for (number, document) in corpus.documents.iter().enumerate() {
        let passages: Vec<NewPassage> = document
            .passages
            .iter()
            .map(|passage| NewPassage {
                text: document.text[passage.range()].to_string(),
                heading: passage.heading.clone(),
                offset: passage.offset,
                length: passage.length,
            })
            .collect();
        let file = &seen_by_document[number];
        let started = Instant::now();
        let stored = index
            .store()
            .run_blocking(|connection| {
                store::record_passages(
                    connection,
                    file.fileid,
                    1,
                    file.etag.as_deref(),
                    &passages,
                    now,
                )
            })
            .expect("record_passages");
        passages_time += started.elapsed();
        assert!(stored, "the row is at version 1");
    }
    checkpoint(&index);
    let size = |path: &std::path::Path| {
        std::fs::metadata(path).map(|metadata| metadata.len()).unwrap_or(0)
    };
    let database_bytes = size(&database);
    let wal_bytes = size(&directory.join("index.db-wal"));

    // Truth first: it also checks our tokenizer against FTS5 below.
    let truths: Vec<Truth> = bench_queries.iter().map(|query| truth(&corpus, query)).collect();

    let request = |query: &BenchQuery| search::Request {
        query: Some(query.text.clone()),
        heading: None,
        folder: None,
        limit: PAGE_LIMIT,
    };
    eprintln!("[{passage_count}] warming up");
    for query in bench_queries.iter().cycle().take(WARMUP_QUERIES) {
        fts_candidates(&index, &query.text);
        search_as(&index, &alice, &request(query), &counter).await;
        search_as(&index, &bob, &request(query), &counter).await;
    }

    eprintln!("[{passage_count}] measuring {} queries", bench_queries.len());
    let mut report = Report {
        passages: corpus.passages.len(),
        documents: corpus.documents.len(),
        shared_documents: corpus.shared.len(),
        queries: bench_queries.len(),
        passage_text_bytes: corpus.passage_text_bytes,
        chunk_time: corpus.chunk_time,
        seen_time,
        passages_time,
        database_bytes,
        wal_bytes,
        baseline: Samples::default(),
        alice: Samples::default(),
        bob: Samples::default(),
        alice_check: Samples::default(),
        alice_hits: Samples::default(),
        alice_writes: Samples::default(),
        alice_writes_batched: Samples::default(),
        alice_folder: Samples::default(),
        folder_checks: Samples::default(),
        folder_writes: Samples::default(),
        folder_writes_batched: Samples::default(),
        folder_survivors: Vec::new(),
        bob_search: Samples::default(),
        fts_candidates: Vec::new(),
        pages: PageCounts::default(),
        meaning: None,
    };
    for (query, truth) in bench_queries.iter().zip(&truths) {
        let started = Instant::now();
        let (_, candidates) = fts_candidates(&index, &query.text);
        report.baseline.push(started.elapsed(), 0);
        assert_eq!(
            candidates.len(),
            truth.matching.min(CANDIDATES_MAX),
            "FTS5 and the brute force agree on {:?}",
            query.text
        );
        report.fts_candidates.push(candidates.len());

        let (duration, requests, outcome) =
            search_as(&index, &alice, &request(query), &counter).await;
        report.alice.push(duration, requests);
        let expected = truth.page_alice.min(PAGE_LIMIT);
        assert_eq!(outcome.passages.len(), expected, "alice's page for {:?}", query.text);
        if truth.page_alice >= PAGE_LIMIT {
            report.pages.alice_possible += 1;
            report.pages.alice_full += usize::from(outcome.passages.len() == PAGE_LIMIT);
        }

        let (duration, requests, outcome) =
            search_as(&index, &bob, &request(query), &counter).await;
        report.bob.push(duration, requests);
        for passage in &outcome.passages {
            assert!(
                shared_fileids.contains(&passage.fileid),
                "bob sees only what is shared with him"
            );
        }
        let returned = outcome.passages.len();
        if truth.page_bob >= PAGE_LIMIT {
            report.pages.bob_possible += 1;
            report.pages.bob_full += usize::from(returned == PAGE_LIMIT);
        } else if truth.page_bob > 0 {
            report.pages.bob_partial += 1;
            report.pages.bob_partial_complete += usize::from(returned == truth.page_bob);
        }
        let folder_request =
            search::Request { folder: Some(SHARED_FOLDER.to_string()), ..request(query) };
        let (duration, requests, outcome) =
            search_as(&index, &alice, &folder_request, &counter).await;
        report.alice_folder.push(duration, requests);
        if truth.page_bob >= PAGE_LIMIT {
            report.pages.folder_possible += 1;
            report.pages.folder_full += usize::from(outcome.passages.len() == PAGE_LIMIT);
        }

        if returned < truth.page_bob.min(PAGE_LIMIT) {
            report.pages.bob_short.push(format!(
                "{:?}: {returned} of {} ({} candidates, {} matching passages)",
                query.text,
                truth.page_bob.min(PAGE_LIMIT),
                candidates.len(),
                truth.matching
            ));
        }
    }

    // Where alice's time goes: the same steps `search` takes, timed apart.
    for (number, query) in bench_queries.iter().enumerate() {
        let (fts, candidates) = fts_candidates(&index, &query.text);
        // The files of the first round and the page, as `search` picks
        // them: alice reads every file.
        let all_files = search::file_order(&candidates);
        let files: Vec<u64> = all_files.iter().copied().take(CHECK_FIRST).collect();
        let checked: HashMap<u64, Option<usize>> =
            files.iter().enumerate().map(|(index, fileid)| (*fileid, Some(index))).collect();
        let rowids: Vec<i64> =
            search::choose(&candidates, &checked, PAGE_LIMIT, search::Unchecked::Skip)
                .into_iter()
                .map(|(rowid, _)| rowid)
                .collect();
        let before = counter.read();
        let started = Instant::now();
        let readable = visible::readable(&alice, &files, None)
            .await
            .unwrap_or_else(|failure| panic!("permission check failed: {}", failure.message));
        report.alice_check.push(started.elapsed(), counter.read() - before);
        assert_eq!(readable.len(), files.len(), "alice reads every file");

        let started = Instant::now();
        index
            .store()
            .run_blocking(|connection| {
                let still = store::Still { matching: Some(fts.clone()), embedded_by: None };
                store::hits(connection, &still, &rowids)
            })
            .expect("hits");
        report.alice_hits.push(started.elapsed(), 0);

        let survivors: Vec<SeenFile> = readable.iter().map(fill::seen_file).collect();
        let recorded = Some((query.text.as_str(), files.len(), rowids.len()));
        let elapsed = timed_writes(&index, &survivors, now, recorded, false);
        report.alice_writes.push(elapsed, 0);
        // The same writes in one transaction, for comparison.
        let elapsed = timed_writes(&index, &survivors, now, recorded, true);
        report.alice_writes_batched.push(elapsed, 0);

        // One permission SEARCH of bob's (up to 100 ids, his tree is small).
        let ids: Vec<u64> = all_files.iter().copied().take(CHECK_BATCH_MAX).collect();
        if !ids.is_empty() {
            let before = counter.read();
            let started = Instant::now();
            visible::readable(&bob, &ids, None)
                .await
                .unwrap_or_else(|failure| panic!("permission check failed: {}", failure.message));
            report.bob_search.push(started.elapsed(), counter.read() - before);
        }

        // Alice in the shared folder: replay the rounds `search` ran, then
        // time its permission checks and its writes apart.
        let (rounds, requests) = folder_rounds(&index, &query.text, &shared_fileids);
        assert_eq!(
            requests, report.alice_folder.requests[number],
            "the replay of {:?} sends what search sent",
            query.text
        );
        if rounds.is_empty() {
            continue;
        }
        let before = counter.read();
        let started = Instant::now();
        let mut readable = Vec::new();
        for round in rounds {
            readable.extend(
                visible::readable(&alice, &round, None).await.unwrap_or_else(|failure| {
                    panic!("permission check failed: {}", failure.message)
                }),
            );
        }
        report.folder_checks.push(started.elapsed(), counter.read() - before);
        let survivors: Vec<SeenFile> = readable.iter().map(fill::seen_file).collect();
        report.folder_survivors.push(survivors.len());
        report.folder_writes.push(timed_writes(&index, &survivors, now, None, false), 0);
        report.folder_writes_batched.push(timed_writes(&index, &survivors, now, None, true), 0);
    }

    if embeddings {
        report.meaning = Some(measure_meaning(&database, &bench_queries, &alice, &counter).await);
    }

    counted.abort();
    fake.shutdown().await;
    drop(index);
    let _ = std::fs::remove_dir_all(&directory);
    report
}

// ---- with embeddings -----------------------------------------------------------

/// The model name the bench's vectors are stored under.
const BENCH_MODEL: &str = "fake-embeddings";

/// files_grep with embeddings on, over the same index.db.
struct Meaning {
    dimensions: usize,
    /// The embedding passes over every passage, through the fake model.
    embed_time: Duration,
    /// index.db's growth with the vectors.
    vector_bytes: u64,
    /// The first search's load of the in-memory copy.
    copy_load: Duration,
    /// The query's embedding request alone.
    query_embedding: Samples,
    /// `Index::nearest` alone (the exact scan).
    scan: Samples,
    /// Alice's searches per fusion, and how many answered by meaning.
    fusions: Vec<(Fusion, Samples, usize)>,
}

/// Embeds every passage through the embedding passes, against the fake
/// model's `/v1/embeddings` (a hashed bag of words: the vectors have the
/// real size and the search does the real work, but they mean nothing, so
/// only the timings count), then times alice's searches under each fusion.
async fn measure_meaning(
    database: &std::path::Path,
    bench_queries: &[BenchQuery],
    alice: &Nextcloud,
    counter: &Counter,
) -> Meaning {
    let model = fake_model::FakeModel::start(fake_model::Config::default())
        .await
        .expect("the fake model starts");
    let embeddings = EmbeddingsConfig {
        url: format!("{}/v1", model.url()),
        model: BENCH_MODEL.to_string(),
        ..EmbeddingsConfig::default()
    };
    let open = |fusion: Fusion| {
        Index::open(
            &IndexConfig {
                path: Some(database.to_path_buf()),
                embeddings: Some(embeddings.clone()),
                fusion,
                ..IndexConfig::default()
            },
            None,
        )
        .expect("index.db opens")
    };
    let size = |path: &std::path::Path| {
        checkpoint(&open(Fusion::Words));
        let wal = path.with_extension("db-wal");
        [path, wal.as_path()]
            .iter()
            .map(|path| std::fs::metadata(path).map(|metadata| metadata.len()).unwrap_or(0))
            .sum::<u64>()
    };
    let before = size(database);
    let index = open(Fusion::Words);
    let started = Instant::now();
    index.kick_embedding();
    index.idle().await;
    let embed_time = started.elapsed();
    let status = index.store().run_blocking(|c| store::status(c)).expect("status");
    assert_eq!(status.embedded, status.passages, "every passage is embedded");
    drop(index);
    let vector_bytes = size(database).saturating_sub(before);
    eprintln!("embedded {} passages in {:.1} s", status.embedded, embed_time.as_secs_f64());

    let request = |query: &BenchQuery| search::Request {
        query: Some(query.text.clone()),
        heading: None,
        folder: None,
        limit: PAGE_LIMIT,
    };
    let embedder = Embedder::new(embeddings.clone(), reqwest::Client::new());
    let index = open(Fusion::Meaning);
    let started = Instant::now();
    let first = embedder.embed(&["load".to_string()]).await.expect("the fake embeds");
    index.nearest(first[0].clone(), 1).await.expect("the copy loads");
    let copy_load = started.elapsed();
    let mut query_embedding = Samples::default();
    let mut scan = Samples::default();
    let mut dimensions = 0;
    for query in bench_queries {
        let started = Instant::now();
        let vector =
            embedder.embed(std::slice::from_ref(&query.text)).await.expect("the fake embeds");
        query_embedding.push(started.elapsed(), 0);
        dimensions = vector[0].len();
        let started = Instant::now();
        index.nearest(vector[0].clone(), CANDIDATES_MAX).await.expect("the scan runs");
        scan.push(started.elapsed(), 0);
    }
    drop(index);
    let mut fusions = Vec::new();
    for fusion in [Fusion::MeaningFallback, Fusion::FusedFallback, Fusion::Fused, Fusion::Meaning] {
        let index = open(fusion);
        for query in bench_queries.iter().take(WARMUP_QUERIES) {
            search_as(&index, alice, &request(query), counter).await;
        }
        let mut samples = Samples::default();
        let mut by_meaning = 0;
        for query in bench_queries {
            let (duration, requests, outcome) =
                search_as(&index, alice, &request(query), counter).await;
            samples.push(duration, requests);
            by_meaning += usize::from(outcome.matched == search::Matched::Meaning);
        }
        fusions.push((fusion, samples, by_meaning));
    }
    Meaning { dimensions, embed_time, vector_bytes, copy_load, query_embedding, scan, fusions }
}

fn checkpoint(index: &Index) {
    index
        .store()
        .run_blocking(|connection| {
            let busy: i64 =
                connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))?;
            assert_eq!(busy, 0, "the checkpoint completed");
            Ok(())
        })
        .expect("checkpoint");
}

/// The FTS5 part of a search: the AND query, and the OR query when the AND
/// found nothing — what `search` sends to `store::candidates`.
/// How long the writes `search` makes after a permission check take:
/// `survivors` recorded as seen at `now` and, where given, the query row
/// (text, candidate files, returned passages), each statement on its own or,
/// `batched`, all in one transaction.
fn timed_writes(
    index: &Index,
    survivors: &[SeenFile],
    now: i64,
    query: Option<(&str, usize, usize)>,
    batched: bool,
) -> Duration {
    let write = |connection: &rusqlite::Connection| -> Result<(), store::StoreError> {
        for file in survivors {
            store::record_seen(connection, file, now)?;
        }
        if let Some((text, candidates, returned)) = query {
            store::record_query(connection, now, text, candidates, survivors.len(), returned)?;
        }
        Ok(())
    };
    let started = Instant::now();
    index
        .store()
        .run_blocking(|connection| {
            if !batched {
                return write(connection);
            }
            let transaction = connection.transaction()?;
            write(&transaction)?;
            transaction.commit()?;
            Ok(())
        })
        .expect("writes");
    started.elapsed()
}

/// The permission rounds `search` runs for alice restricted to the shared
/// folder, replayed: the all-words phase and, when none of its passages
/// survives (and the query has several words), the any-word phase, ranked
/// as `search` ranks it (more distinct words first, then bm25). The file
/// ids each round asks about (rounds without candidates left out), and the
/// requests sent: a round with no candidate still sends one.
fn folder_rounds(index: &Index, text: &str, shared: &HashSet<u64>) -> (Vec<Vec<u64>>, u64) {
    let query = FtsQuery::parse(text).expect("queries have words");
    let phase = |fts: String, terms: Vec<String>| -> Vec<store::Candidate> {
        index
            .store()
            .run_blocking(|connection| search::ranked(connection, &fts, &terms))
            .expect("FTS5 query")
    };
    let mut rounds = Vec::new();
    let mut requests = 0;
    let mut replay = |candidates: &[store::Candidate]| -> usize {
        let files = search::file_order(candidates);
        let mut checked_files: HashMap<u64, Option<usize>> = HashMap::new();
        let mut checked = 0;
        let mut chosen = 0;
        let mut batch = CHECK_FIRST;
        for round in 0..CHECK_ROUNDS_MAX {
            if round > 0 && (checked >= files.len() || chosen >= PAGE_LIMIT) {
                break;
            }
            let end = (checked + batch).min(files.len());
            let ids = files[checked..end].to_vec();
            requests += ids.len().div_ceil(CHECK_BATCH_MAX).max(1) as u64;
            for fileid in &ids {
                // The survivor index does not matter to the count.
                checked_files.insert(*fileid, shared.contains(fileid).then_some(0));
            }
            if !ids.is_empty() {
                rounds.push(ids);
            }
            checked = end;
            batch *= CHECK_GROWTH;
            chosen =
                search::choose(candidates, &checked_files, PAGE_LIMIT, search::Unchecked::Stop)
                    .len();
        }
        search::choose(candidates, &checked_files, PAGE_LIMIT, search::Unchecked::Skip).len()
    };
    let chosen = replay(&phase(query.all(), Vec::new()));
    if chosen == 0 && query.term_count() > 1 {
        replay(&phase(query.any(), query.terms()));
    }
    (rounds, requests)
}

fn fts_candidates(index: &Index, text: &str) -> (String, Vec<store::Candidate>) {
    let query = FtsQuery::parse(text).expect("queries have words");
    index
        .store()
        .run_blocking(|connection| {
            let all = query.all();
            let found = store::candidates(connection, &all, CANDIDATES_MAX)?;
            if found.is_empty() && query.term_count() > 1 {
                let any = query.any();
                let found = store::candidates(connection, &any, CANDIDATES_MAX)?;
                return Ok((any, found));
            }
            Ok((all, found))
        })
        .expect("FTS5 query")
}

async fn search_as(
    index: &Index,
    nextcloud: &Nextcloud,
    request: &search::Request,
    counter: &Counter,
) -> (Duration, u64, search::Outcome) {
    let before = counter.read();
    let started = Instant::now();
    let outcome = search::search(index, nextcloud, request)
        .await
        .unwrap_or_else(|failure| panic!("files_grep failed: {}", failure.message));
    (started.elapsed(), counter.read() - before, outcome)
}

// ---- printing --------------------------------------------------------------

impl Report {
    fn print(&self) {
        let megabytes = self.passage_text_bytes as f64 / 1e6;
        let store_time = self.seen_time + self.passages_time;
        let on_disk = self.database_bytes + self.wal_bytes;
        println!();
        println!(
            "== {} passages: {} documents (FR/EN, Markdown and plain text), {:.1} MB passage text, mean {:.0} B/passage",
            self.passages,
            self.documents,
            megabytes,
            self.passage_text_bytes as f64 / self.passages as f64
        );
        println!(
            "chunking (chunk::chunk):  {:.2} s, {:.1} MB/s",
            self.chunk_time.as_secs_f64(),
            megabytes / self.chunk_time.as_secs_f64()
        );
        println!(
            "index fill, one thread:   {:.2} s ({:.2} s record_seen in pages of {}, {:.2} s record_passages per document): {:.2} MB/s, {:.0} documents/s, {:.0} passages/s",
            store_time.as_secs_f64(),
            self.seen_time.as_secs_f64(),
            Limits::default().discovery_page,
            self.passages_time.as_secs_f64(),
            megabytes / store_time.as_secs_f64(),
            self.documents as f64 / store_time.as_secs_f64(),
            self.passages as f64 / store_time.as_secs_f64(),
        );
        println!(
            "index.db on disk:         {:.1} MB (+ {} B -wal after wal_checkpoint(TRUNCATE)): {:.0} B/passage, {:.2}× passage text",
            self.database_bytes as f64 / 1e6,
            self.wal_bytes,
            on_disk as f64 / self.passages as f64,
            on_disk as f64 / self.passage_text_bytes as f64
        );
        let mut candidates = self.fts_candidates.clone();
        candidates.sort_unstable();
        println!(
            "queries: {} (1–3 words), limit {PAGE_LIMIT}; FTS5 candidates per query p50 {}, max {} (cap {CANDIDATES_MAX})",
            self.queries,
            candidates[candidates.len() / 2],
            candidates.last().copied().unwrap_or(0)
        );
        println!(
            "{:<46} {:>9} {:>9} {:>9} {:>9} {:>9} {:>14}",
            "row", "p50 ms", "p99 ms", "mean ms", "×FTS p50", "×FTS p99", "NC req/call"
        );
        let base50 = self.baseline.percentile(0.50);
        let base99 = self.baseline.percentile(0.99);
        let shared = format!(
            "files_grep as bob (reads {} of {} files)",
            self.shared_documents, self.documents
        );
        let mut survivors = self.folder_survivors.clone();
        survivors.sort_unstable();
        let folder_writes = format!(
            "  record_seen ×survivors (p50 {}, max {})",
            survivors.get(survivors.len() / 2).copied().unwrap_or(0),
            survivors.last().copied().unwrap_or(0)
        );
        let rows: [(&str, &Samples); 12] = [
            ("FTS5 candidates (baseline)", &self.baseline),
            ("files_grep as alice (reads all)", &self.alice),
            ("  alice: permission SEARCH, 50 ids", &self.alice_check),
            ("  alice: snippets (store::hits, 10 rowids)", &self.alice_hits),
            ("  alice: record_seen ×50 + record_query", &self.alice_writes),
            ("  (the same writes in one transaction)", &self.alice_writes_batched),
            ("files_grep as alice, folder with 0.1 %", &self.alice_folder),
            ("  its permission SEARCHes, replayed", &self.folder_checks),
            (&folder_writes, &self.folder_writes),
            ("  (the same writes in one transaction)", &self.folder_writes_batched),
            (&shared, &self.bob),
            ("  bob: one permission SEARCH, 100 ids", &self.bob_search),
        ];
        for (label, samples) in rows {
            if samples.durations.is_empty() {
                continue;
            }
            let p50 = samples.percentile(0.50);
            let p99 = samples.percentile(0.99);
            println!(
                "{:<46} {:>9.3} {:>9.3} {:>9.3} {:>9.2} {:>9.2} {:>8.1} ({:>3})",
                label,
                p50,
                p99,
                samples.mean(),
                p50 / base50,
                p99 / base99,
                samples.requests_mean(),
                samples.requests_max()
            );
        }
        let pages = &self.pages;
        println!(
            "full pages: alice {}/{} queries where ≥{PAGE_LIMIT} passages exist, {}/{} in the shared folder; bob {}/{} where his files hold ≥{PAGE_LIMIT}, all of them {}/{} where they hold 1–9",
            pages.alice_full,
            pages.alice_possible,
            pages.folder_full,
            pages.folder_possible,
            pages.bob_full,
            pages.bob_possible,
            pages.bob_partial_complete,
            pages.bob_partial
        );
        for short in &pages.bob_short {
            println!("  bob short: {short}");
        }
        if let Some(meaning) = &self.meaning {
            self.print_meaning(meaning);
        }
    }

    fn print_meaning(&self, meaning: &Meaning) {
        println!(
            "with embeddings ({} dimensions, the fake model's hashed vectors): embedding passes {:.1} s ({:.0} passages/s); vectors {:.1} MB in index.db ({:.0} B/passage); in-memory copy {:.1} MB, loaded in {:.0} ms",
            meaning.dimensions,
            meaning.embed_time.as_secs_f64(),
            self.passages as f64 / meaning.embed_time.as_secs_f64(),
            meaning.vector_bytes as f64 / 1e6,
            meaning.vector_bytes as f64 / self.passages as f64,
            (self.passages * meaning.dimensions * 4) as f64 / 1e6,
            meaning.copy_load.as_secs_f64() * 1000.0
        );
        println!(
            "{:<46} {:>9} {:>9} {:>9} {:>11} {:>9} {:>14}",
            "row", "p50 ms", "p99 ms", "mean ms", "×words p50", "by meaning", "NC req/call"
        );
        let words50 = self.alice.percentile(0.50);
        let mut rows: Vec<(String, &Samples, Option<usize>)> = vec![
            ("files_grep as alice, words only".to_string(), &self.alice, None),
            ("  the query's embedding request (fake)".to_string(), &meaning.query_embedding, None),
            ("  the exact scan (Index::nearest)".to_string(), &meaning.scan, None),
        ];
        for (fusion, samples, by_meaning) in &meaning.fusions {
            rows.push((
                format!("files_grep as alice, {}", fusion.name()),
                samples,
                Some(*by_meaning),
            ));
        }
        for (label, samples, by_meaning) in rows {
            let p50 = samples.percentile(0.50);
            println!(
                "{:<46} {:>9.3} {:>9.3} {:>9.3} {:>11.2} {:>9} {:>8.1} ({:>3})",
                label,
                p50,
                samples.percentile(0.99),
                samples.mean(),
                p50 / words50,
                by_meaning.map_or("".to_string(), |count| format!("{count}/{}", self.queries)),
                samples.requests_mean(),
                samples.requests_max()
            );
        }
    }
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
