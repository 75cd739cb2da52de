//! host-cli's modules import each other without cycles (the order is
//! written down in `src/lib.rs`), and subcommands do not import each other.
//! Reads every source file, takes the top-level module of each
//! `crate::<module>` path and `crate::{…}` group outside comments (each
//! `commands/<x>` file its own node), and looks for a cycle in that graph;
//! the test fails naming the cycle.

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
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let top = parts[0].trim_end_matches(".rs").to_string();
        if top == "main" || top == "lib" {
            continue;
        }
        // Each subcommand is its own node, so "commands do not import each
        // other" is checked too; `commands/mod.rs` only declares them.
        let module = if top == "commands" && parts.len() > 1 {
            format!("commands/{}", parts[1].trim_end_matches(".rs"))
        } else {
            top.clone()
        };
        let text: String = std::fs::read_to_string(&path)
            .expect("read source")
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let deps = graph.entry(module.clone()).or_default();
        for name in crate_paths(&text) {
            if name != top && name != module {
                deps.insert(name);
            }
        }
    }
}

/// The top-level modules named by `crate::a…` and `crate::{a…, b…}` paths
/// (`$crate::` in a macro names the crate root and is skipped).
fn crate_paths(text: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let is_macro_root = rest[..i].ends_with('$');
        let tail = &rest[i + "crate::".len()..];
        if !is_macro_root {
            if let Some(group) = tail.strip_prefix('{') {
                // Top-level names of the group: depth-1 identifiers that
                // start an item (after `{` or `,`).
                let (mut depth, mut start) = (1usize, true);
                for (k, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => start = true,
                        c if c.is_whitespace() => {}
                        _ if start && depth == 1 => {
                            out.push(ident(&group[k..]));
                            start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                let name = ident(tail);
                // `crate::commands::x` names the subcommand node `commands/x`.
                match tail[name.len()..].strip_prefix("::") {
                    Some(sub) if name == "commands" => out.push(format!("commands/{}", ident(sub))),
                    _ => out.push(name),
                }
            }
        }
        rest = tail;
    }
    out.retain(|n| !n.is_empty());
    out
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
    for m in ["args", "cv", "data", "family", "fit", "commands/train", "commands/eval", "model_io"] {
        assert!(graph.contains_key(m), "module {m} not found under {}", src.display());
    }
    assert!(graph["cv"].contains("family"), "the walk must see cv's imports: {:?}", graph["cv"]);
    for (m, deps) in graph.iter().filter(|(m, _)| m.starts_with("commands/")) {
        assert!(!deps.iter().any(|d| d.starts_with("commands")), "subcommand {m} imports another subcommand: {deps:?}");
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between host-cli modules: {}", cycle.join(" → "));
    }
}

#[test]
fn crate_paths_reads_groups_and_skips_macro_roots() {
    let src = "use crate::a::X;\nuse crate::{b::Y, c, d::{e, f}};\nlet _ = $crate::g::h;\nuse crate::commands::train;";
    assert_eq!(crate_paths(src), vec!["a", "b", "c", "d", "commands/train"]);
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

/// The modules `main.rs` declares (`mod x;`): the binary's own tree.
fn binary_modules(main: &str) -> Vec<String> {
    main.lines()
        .filter_map(|l| l.trim().strip_prefix("mod ").and_then(|r| r.strip_suffix(';')))
        .map(|m| m.trim().to_string())
        .collect()
}

/// The host library is free of the command line whatever its features: no
/// source file outside the binary's module tree (the modules `main.rs`
/// declares) names clap, indicatif or plotters or has items behind the
/// `cli` feature, even in comments; and the binary's modules are not
/// declared by `lib.rs`.
#[test]
fn the_library_has_no_command_line_code() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let main = std::fs::read_to_string(src.join("main.rs")).expect("read main.rs");
    let bin = binary_modules(&main);
    for m in ["commands", "input", "plot"] {
        assert!(bin.iter().any(|b| b == m), "main.rs must declare `mod {m};`: {bin:?}");
    }
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("read lib.rs");
    for m in &bin {
        assert!(!lib.contains(&format!("mod {m};")), "lib.rs declares the binary's module {m}");
    }
    let mut files = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    walk(&src, &mut files);
    let mut problems = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).expect("under src");
        let top = rel.components().next().map(|c| c.as_os_str().to_string_lossy().trim_end_matches(".rs").to_string());
        if top.as_deref() == Some("main") || bin.iter().any(|b| Some(b.as_str()) == top.as_deref()) {
            continue;
        }
        let text = std::fs::read_to_string(f).expect("read source");
        for (i, line) in text.lines().enumerate() {
            if ["clap", "indicatif", "plotters", "feature = \"cli\""].iter().any(|w| line.contains(w)) {
                problems.push(format!("src/{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(files.len() > 20, "the walk must see the sources: {}", files.len());
    assert!(
        problems.is_empty(),
        "command-line code in the host library (move it into the binary's modules, declared in main.rs):\n{}",
        problems.join("\n")
    );
}
