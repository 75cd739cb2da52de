//! `parse_items_str` and `parse_orders_str` on arbitrary text.
//!
//! The input is `items text \0 orders text`; without a NUL byte the whole
//! input is parsed as items and, as orders, against a fixed items file.
//! Invalid UTF-8 is replaced by U+FFFD.
//!
//! Contract under test: no panic; items have unique ids that `index_of`
//! finds, finite attributes, `len() × n_attrs()` of them; every order has
//! at least two distinct, valid item indices.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ranklet::data::{parse_items_str, parse_orders_str, Items};

const FIXED_ITEMS: &str = "id,a,b\nx,1,2\ny,3,4\nz,5,6\nw,0,0\n";

fn check_items(items: &Items) {
    assert!(!items.is_empty());
    assert_eq!(items.attrs().len(), items.len() * items.n_attrs());
    assert_eq!(items.attr_names().len(), items.n_attrs());
    assert!(items.attrs().iter().all(|v| v.is_finite()));
    for (i, id) in items.ids().iter().enumerate() {
        assert_eq!(items.index_of(id), Some(i), "id {id:?}");
        assert_eq!(items.attrs_of(i).len(), items.n_attrs());
    }
}

fn check_orders(text: &str, items: &Items) {
    if let Ok(orders) = parse_orders_str(text, "fuzz.orders", items) {
        assert!(!orders.is_empty());
        for o in &orders {
            assert!(o.len() >= 2);
            let mut s = o.clone();
            s.sort_unstable();
            s.dedup();
            assert_eq!(s.len(), o.len(), "item repeated in an order");
            assert!(o.iter().all(|&k| k < items.len()));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (items_bytes, orders_bytes) = match data.iter().position(|&b| b == 0) {
        Some(p) => (&data[..p], Some(&data[p + 1..])),
        None => (data, None),
    };
    let items_text = String::from_utf8_lossy(items_bytes);
    let parsed = parse_items_str(&items_text, "fuzz.items");
    if let Ok(items) = &parsed {
        check_items(items);
    }
    match orders_bytes {
        Some(ob) => {
            let text = String::from_utf8_lossy(ob);
            if let Ok(items) = &parsed {
                check_orders(&text, items);
            }
            let fixed = parse_items_str(FIXED_ITEMS, "fixed").expect("fixed items");
            check_orders(&text, &fixed);
        }
        None => {
            let fixed = parse_items_str(FIXED_ITEMS, "fixed").expect("fixed items");
            check_orders(&items_text, &fixed);
        }
    }
});
