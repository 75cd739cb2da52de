//! host-cli's modules import each other without cycles (the order is
//! written down in `src/lib.rs`). Reads every source file, takes the
//! top-level module of each `crate::<module>` path outside comments, and
//! looks for a cycle in that graph; the test fails naming the cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn collect(dir: &Path, root: &Path, graph: &mut BTreeMap<String, BTreeSet<String>>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            collect(&path, root, graph);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(root).expect("under src");
        let first = rel.components().next().expect("a component").as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "main" || module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read source");
        let deps = graph.entry(module.clone()).or_default();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let mut rest = line;
            while let Some(i) = rest.find("crate::") {
                // `$crate::` in a macro names the crate root, not a use.
                let is_macro_root = rest[..i].ends_with('$');
                let tail = &rest[i + "crate::".len()..];
                let name: String = tail.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !is_macro_root && !name.is_empty() && name != module {
                    deps.insert(name);
                }
                rest = tail;
            }
        }
    }
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        u: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(u.to_string(), 1);
        stack.push(u.to_string());
        for v in graph.get(u).into_iter().flatten().filter(|v| graph.contains_key(*v)) {
            match state.get(v.as_str()) {
                Some(1) => {
                    let start = stack.iter().position(|s| s == v).unwrap_or(0);
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(v.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(v, graph, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(u.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        if !state.contains_key(m.as_str()) {
            if let Some(c) = visit(m, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn host_cli_modules_have_no_import_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    collect(&src, &src, &mut graph);
    // The walk must have seen the modules it is about.
    for m in ["args", "cv", "data", "family", "fit", "commands", "model_io"] {
        assert!(graph.contains_key(m), "module {m} not found under {}", src.display());
    }
    assert!(graph["cv"].contains("family"), "the walk must see cv's imports: {:?}", graph["cv"]);
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between host-cli modules: {}", cycle.join(" → "));
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(find_cycle(&g), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    g.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&g), None);
}
