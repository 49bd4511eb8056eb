//! The exports read back as their viewers read them: the Chrome trace
//! parsed as JSON (a small parser here: the tests take no JSON crate) and
//! checked against the format's rules; the PyTorch snapshot loaded by
//! Python's own `pickle` and checked against the keys
//! `torch/cuda/_memory_viz.py` reads (`check_pickle.py`; skipped, with the
//! reason, without `python3`); the page checked for what it must not hold.

use std::collections::BTreeMap;

use crate::traces::{options, read_trace, replay};

/// A JSON value.
#[derive(Debug)]
enum Json {
    Null,
    Bool(#[allow(dead_code)] bool),
    Number(f64),
    Text(String),
    List(Vec<Json>),
    Object(BTreeMap<String, Json>),
}

/// Parses one JSON value from `text`, the rest being whitespace.
fn parse(text: &str) -> Result<Json, String> {
    let mut at = 0;
    let value = value(text.as_bytes(), &mut at)?;
    skip(text.as_bytes(), &mut at);
    if at != text.len() {
        return Err(format!("trailing bytes at {at}"));
    }
    Ok(value)
}

fn skip(bytes: &[u8], at: &mut usize) {
    while bytes.get(*at).is_some_and(|b| b.is_ascii_whitespace()) {
        *at += 1;
    }
}

fn value(bytes: &[u8], at: &mut usize) -> Result<Json, String> {
    skip(bytes, at);
    let bad = |at: usize| format!("unexpected byte at {at}");
    let word = |at: &mut usize, word: &str, json| {
        let found = bytes[*at..].starts_with(word.as_bytes());
        *at += word.len();
        found.then_some(json).ok_or(bad(*at))
    };
    match bytes.get(*at).ok_or("unexpected end")? {
        b'n' => word(at, "null", Json::Null),
        b't' => word(at, "true", Json::Bool(true)),
        b'f' => word(at, "false", Json::Bool(false)),
        b'"' => text(bytes, at).map(Json::Text),
        b'[' | b'{' => {
            let object = bytes[*at] == b'{';
            let (mut list, mut map) = (Vec::new(), BTreeMap::new());
            *at += 1;
            skip(bytes, at);
            if bytes.get(*at) == Some(if object { &b'}' } else { &b']' }) {
                *at += 1;
            } else {
                loop {
                    if object {
                        skip(bytes, at);
                        let key = text(bytes, at)?;
                        skip(bytes, at);
                        (bytes.get(*at) == Some(&b':'))
                            .then_some(())
                            .ok_or(bad(*at))?;
                        *at += 1;
                        map.insert(key, value(bytes, at)?);
                    } else {
                        list.push(value(bytes, at)?);
                    }
                    skip(bytes, at);
                    *at += 1;
                    match (bytes.get(*at - 1), object) {
                        (Some(b','), _) => continue,
                        (Some(b'}'), true) | (Some(b']'), false) => break,
                        _ => return Err(bad(*at - 1)),
                    }
                }
            }
            Ok(if object {
                Json::Object(map)
            } else {
                Json::List(list)
            })
        }
        _ => {
            let start = *at;
            while bytes
                .get(*at)
                .is_some_and(|b| b"+-.eE0123456789".contains(b))
            {
                *at += 1;
            }
            let number = std::str::from_utf8(&bytes[start..*at]).unwrap();
            number.parse().map(Json::Number).map_err(|_| bad(start))
        }
    }
}

/// A string (the exports escape only `"` and `\`).
fn text(bytes: &[u8], at: &mut usize) -> Result<String, String> {
    (bytes.get(*at) == Some(&b'"'))
        .then_some(())
        .ok_or("a string")?;
    let mut out = Vec::new();
    *at += 1;
    loop {
        match *bytes.get(*at).ok_or("an open string")? {
            b'"' => break,
            b'\\' => {
                *at += 1;
                out.push(bytes[*at]);
            }
            byte => out.push(byte),
        }
        *at += 1;
    }
    *at += 1;
    String::from_utf8(out).map_err(|e| e.to_string())
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(map) => map.get(key),
            _ => None,
        }
    }

    fn number(&self, key: &str) -> Option<f64> {
        match self.get(key) {
            Some(Json::Number(n)) => Some(*n),
            _ => None,
        }
    }

    fn text(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Json::Text(text)) => Some(text),
            _ => None,
        }
    }
}

/// The inference trace's history on a growing host arena.
fn history() -> gpu_aligned::history::History {
    let trace = read_trace("infer");
    let (options, policy) = options(&trace);
    let mut arena = options.host(policy.initial()).unwrap();
    replay::replay_recorded(&mut arena, &trace).unwrap()
}

#[test]
#[cfg_attr(miri, ignore = "runs gzip; long")]
fn the_chrome_trace_is_json_in_the_trace_event_format() {
    let history = history();
    let mut json = Vec::new();
    history.to_chrome_trace(&mut json).unwrap();
    let json = parse(std::str::from_utf8(&json).unwrap()).unwrap();
    assert_eq!(json.text("displayTimeUnit"), Some("ns"));
    let Some(Json::List(events)) = json.get("traceEvents") else {
        panic!("no traceEvents list");
    };
    let (mut open, mut last_ts, mut counters) = (BTreeMap::new(), 0.0, 0);
    for event in events {
        let ph = event.text("ph").expect("every event has a phase");
        assert!(event.number("pid").is_some() && event.number("tid").is_some());
        assert!(event.text("name").is_some(), "{event:?}");
        if ph == "M" {
            continue;
        }
        let ts = event.number("ts").expect("a timestamp");
        assert!(ts >= last_ts, "time goes forward: {event:?}");
        last_ts = ts;
        match ph {
            "C" => {
                let Some(Json::Object(args)) = event.get("args") else {
                    panic!("{event:?}")
                };
                assert_eq!(args.len(), 10, "nine parts and the largest free block");
                let sum: f64 = args
                    .iter()
                    .filter(|(k, _)| *k != "largest free")
                    .map(|(_, v)| match v {
                        Json::Number(n) => *n,
                        _ => panic!("a counter is a number: {v:?}"),
                    })
                    .sum();
                assert_eq!(
                    sum,
                    (1u64 << 40) as f64,
                    "the parts sum to the reserved bytes"
                );
                counters += 1;
            }
            "b" | "e" => {
                assert_eq!(event.text("cat"), Some("array"));
                let id = event.number("id").expect("an async slice has an id") as u64;
                match ph {
                    "b" => assert!(open.insert(id, ts).is_none(), "one begin per id"),
                    _ => assert!(
                        open.remove(&id).is_some_and(|begin| begin <= ts),
                        "end after begin"
                    ),
                }
            }
            other => panic!("phase {other}"),
        }
    }
    assert_eq!(
        counters,
        history.ledger().len(),
        "a counter sample per event"
    );
}

#[test]
#[cfg_attr(miri, ignore = "runs python3")]
fn the_pytorch_snapshot_loads_with_pickle_and_has_what_memory_viz_reads() {
    let dir = std::env::temp_dir().join(format!("gpu-aligned-history-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("infer.pickle");
    history()
        .to_pytorch_pickle(&mut std::fs::File::create(&file).unwrap())
        .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/history/check_pickle.py");
    match std::process::Command::new("python3")
        .arg(script)
        .arg(&file)
        .output()
    {
        Err(error) => println!("skipped: no python3 ({error})"),
        Ok(output) => assert!(
            output.status.success(),
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_page_fetches_nothing_and_runs_no_script() {
    let mut arena = gpu_aligned::arena::Arena::host(1 << 20).unwrap();
    arena.record_history(100).unwrap();
    let a = arena.alloc::<u8>(100).unwrap();
    arena.label(&a, "<b>\"quoted\" & more</b>").unwrap();
    let mut page = Vec::new();
    arena.history().unwrap().to_html(&mut page).unwrap();
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("<svg") && page.contains("&lt;b>&quot;quoted&quot; &amp; more&lt;/b>"));
    for banned in ["<script", "http:", "https:", "<b>", "src="] {
        assert!(!page.contains(banned), "{banned} in the page");
    }
}

/// Labels are kept up to a bound (4,096 distinct ones): a run that labels
/// every array anew keeps the first and drops the rest, and still exports.
#[test]
fn distinct_labels_are_kept_up_to_a_bound() {
    let mut arena = gpu_aligned::arena::Arena::host(1 << 20).unwrap();
    arena.record_history(20_000).unwrap();
    for i in 0..5_000 {
        let a = arena.alloc::<u8>(16).unwrap();
        arena.label(&a, &format!("array-{i}-end")).unwrap();
    }
    let mut trace = Vec::new();
    arena
        .history()
        .unwrap()
        .to_chrome_trace(&mut trace)
        .unwrap();
    let trace = String::from_utf8(trace).unwrap();
    assert!(trace.contains("array-0-end") && trace.contains("array-4095-end"));
    assert!(!trace.contains("array-4096-end"));
}
