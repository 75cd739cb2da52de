//! The checked-in header matches this crate: its version macros equal
//! `CARGO_PKG_VERSION`, and every `rk_` function of the crate is declared.
//! (Byte-exact freshness is `scripts/check-header.sh`, which needs cbindgen.)

const HEADER: &str = include_str!("../../include/ranklet.h");

fn define(name: &str) -> &'static str {
    let prefix = format!("#define {name} ");
    let line = HEADER.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("{name} not in header"));
    line[prefix.len()..].trim()
}

#[test]
fn header_version_matches_cargo() {
    assert_eq!(define("RANKLET_VERSION"), format!("\"{}\"", env!("CARGO_PKG_VERSION")));
    assert_eq!(define("RANKLET_VERSION_MAJOR"), env!("CARGO_PKG_VERSION_MAJOR"));
    assert_eq!(define("RANKLET_VERSION_MINOR"), env!("CARGO_PKG_VERSION_MINOR"));
    assert_eq!(define("RANKLET_VERSION_PATCH"), env!("CARGO_PKG_VERSION_PATCH"));
}

#[test]
fn header_declares_every_entry_point_and_status() {
    // Every source file of the crate (the entry points live in its modules).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut src = String::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            src += &std::fs::read_to_string(&path).unwrap();
        }
    }
    let mut n = 0;
    for line in src.lines() {
        if let Some(rest) = line
            .trim_start()
            .strip_prefix("pub unsafe extern \"C\" fn ")
            .or_else(|| line.trim_start().strip_prefix("pub extern \"C\" fn "))
        {
            let name = rest.split('(').next().unwrap();
            assert!(
                HEADER.contains(&format!(" {name}(")) || HEADER.contains(&format!("*{name}(")),
                "{name} missing from header"
            );
            n += 1;
        }
    }
    assert!(n >= 14, "found only {n} entry points");
    for s in ranklet_ffi::rk_status::ALL {
        assert!(HEADER.contains(&format!(" = {},", *s as u32)), "{s:?} missing from header");
    }
}
