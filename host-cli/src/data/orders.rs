//! Items and sample orders (preference learning over a fixed item set).
//!
//! # Items file
//!
//! A CSV file ([`csv`](super::csv) rules: header, quotes, no empty field)
//! with a column named `id`; every other column is an attribute and must be a
//! finite `f64`. Ids are non-empty, unique, and contain no space, tab, comma
//! or `#` (so that an orders file can name them). A header with `id` alone
//! gives items without attributes.
//!
//! # Orders file
//!
//! One order per line: item ids, most preferred first, separated by commas
//! and/or spaces and tabs. Everything from `#` is a comment; blank lines are
//! skipped. Every id must be in the items file, an id may appear only once
//! in an order, and an order has at least 2 items. A file without orders is
//! an error.

use std::{borrow::Cow, collections::HashMap, path::Path};

use super::{
    csv::{list_columns, Records},
    parse_finite, quote, read_text, DataError, ErrorKind,
};

/// Items with ids and numeric attributes, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Items {
    ids: Vec<String>,
    attr_names: Vec<String>,
    attrs: Vec<f64>,
    index: HashMap<String, usize>,
}

impl Items {
    /// Number of items.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// `true` when there are no items (never, for items from a reader).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The ids, in file order.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The attribute names, in header order.
    pub fn attr_names(&self) -> &[String] {
        &self.attr_names
    }

    /// Number of attributes `p`.
    pub fn n_attrs(&self) -> usize {
        self.attr_names.len()
    }

    /// All attributes, row-major `len() × n_attrs()`.
    pub fn attrs(&self) -> &[f64] {
        &self.attrs
    }

    /// The attributes of item `i`.
    ///
    /// # Panics
    ///
    /// If `i >= len()`.
    pub fn attrs_of(&self, i: usize) -> &[f64] {
        let p = self.n_attrs();
        &self.attrs[i * p..(i + 1) * p]
    }

    /// The index of the item with this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }
}

/// Reads an items file. See the [module docs](self) for the format.
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, no `id`
/// column, no items, a duplicate or unusable id, or a missing or non-finite
/// attribute.
pub fn read_items(path: impl AsRef<Path>) -> Result<Items, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_items_str(&text, &path.display().to_string())
}

/// Parses items text; `name` is the file name printed in errors.
///
/// # Errors
///
/// As [`read_items`].
pub fn parse_items_str(text: &str, name: &str) -> Result<Items, DataError> {
    let mut records = Records::new(text, name);
    let (header_line, header) = records.header()?;
    let Some(id_at) = header.iter().position(|h| h == "id") else {
        return Err(DataError::at(
            name,
            header_line,
            ErrorKind::Unknown,
            format!("no \"id\" column; the columns are {}", list_columns(&header)),
        ));
    };
    let attr_names: Vec<String> =
        header.iter().enumerate().filter(|&(j, _)| j != id_at).map(|(_, h)| h.clone()).collect();

    let mut ids = Vec::new();
    let mut attrs = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut lines: Vec<usize> = Vec::new();
    let mut fields: Vec<Cow<'_, str>> = Vec::with_capacity(header.len());
    while let Some(line_no) = records.next_record(&mut fields)? {
        let err = |kind, msg| DataError::at(name, line_no, kind, msg);
        if fields.len() != header.len() {
            return Err(err(
                ErrorKind::Inconsistent,
                format!("{} fields but the header (line {header_line}) has {} columns", fields.len(), header.len()),
            ));
        }
        for (j, field) in fields.iter().enumerate() {
            if field.is_empty() {
                let what = if j == id_at { "id" } else { "attribute" };
                return Err(err(ErrorKind::Malformed, format!("missing {what} in column {}", quote(&header[j]))));
            }
            if j == id_at {
                continue;
            }
            let v = parse_finite(field, "attribute")
                .map_err(|(kind, msg)| err(kind, format!("{msg} in column {}", quote(&header[j]))))?;
            attrs.push(v);
        }
        let id = &fields[id_at];
        if id.contains(|c: char| c == ',' || c == '#' || c.is_whitespace()) {
            return Err(err(
                ErrorKind::Malformed,
                format!(
                    "item id {} contains a space, comma or '#', which an orders file \
                     cannot name",
                    quote(id)
                ),
            ));
        }
        if let Some(&k) = index.get(id.as_ref()) {
            return Err(err(
                ErrorKind::Duplicate,
                format!("item id {} already defined on line {}", quote(id), lines[k]),
            ));
        }
        index.insert(id.to_string(), ids.len());
        ids.push(id.to_string());
        lines.push(line_no);
    }
    if ids.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no items".to_owned()));
    }
    Ok(Items { ids, attr_names, attrs, index })
}

/// Reads an orders file over `items`: each order is a list of item indices,
/// most preferred first. See the [module docs](self) for the format.
///
/// # Errors
///
/// A [`DataError`] naming the file (and line) for a missing file, no orders,
/// an unknown id, an id repeated within an order, or an order of fewer than
/// 2 items.
pub fn read_orders(path: impl AsRef<Path>, items: &Items) -> Result<Vec<Vec<usize>>, DataError> {
    let path = path.as_ref();
    let text = read_text(path)?;
    parse_orders_str(&text, &path.display().to_string(), items)
}

/// Parses orders text; `name` is the file name printed in errors.
///
/// # Errors
///
/// As [`read_orders`].
pub fn parse_orders_str(text: &str, name: &str, items: &Items) -> Result<Vec<Vec<usize>>, DataError> {
    let text = super::strip_bom(text);
    let mut orders: Vec<Vec<usize>> = Vec::new();
    // seen[i] == orders.len() + 1 when item i is already in the current order.
    let mut seen = vec![0usize; items.len()];
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let err = |kind, msg| DataError::at(name, line_no, kind, msg);
        let line = raw.find('#').map_or(raw, |p| &raw[..p]);
        let stamp = orders.len() + 1;
        let mut order = Vec::new();
        for id in line.split(|c: char| c == ',' || c.is_ascii_whitespace()).filter(|t| !t.is_empty()) {
            let Some(k) = items.index_of(id) else {
                return Err(err(ErrorKind::Unknown, format!("unknown item id {}", quote(id))));
            };
            if seen[k] == stamp {
                return Err(err(ErrorKind::Duplicate, format!("item id {} appears twice in this order", quote(id))));
            }
            seen[k] = stamp;
            order.push(k);
        }
        match order.len() {
            0 => continue,
            1 => return Err(err(ErrorKind::Invalid, "an order needs at least 2 items, this one has 1".to_owned())),
            _ => orders.push(order),
        }
    }
    if orders.is_empty() {
        return Err(DataError::file(name, ErrorKind::Empty, "no orders".to_owned()));
    }
    Ok(orders)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items() -> Items {
        parse_items_str("id,price,size\na,1,2\nb,3,4\n\"c\",5,6\n", "items.csv").unwrap()
    }

    #[test]
    fn items_and_orders() {
        let it = items();
        assert_eq!(it.len(), 3);
        assert_eq!(it.attr_names(), &["price", "size"]);
        assert_eq!(it.attrs_of(2), &[5.0, 6.0]);
        assert_eq!(it.index_of("b"), Some(1));
        let o = parse_orders_str("# best first\nc a b\n\nb,a # two\n", "o.txt", &it).unwrap();
        assert_eq!(o, vec![vec![2, 0, 1], vec![1, 0]]);
    }

    #[test]
    fn orders_errors() {
        let it = items();
        let e = |t: &str| parse_orders_str(t, "o", &it).unwrap_err();
        assert_eq!(e("a b\nz a\n").kind(), ErrorKind::Unknown);
        assert_eq!(e("a b\nz a\n").line(), Some(2));
        assert_eq!(e("a b a\n").kind(), ErrorKind::Duplicate);
        assert_eq!(e("a\n").kind(), ErrorKind::Invalid);
        assert_eq!(e("\n# none\n").kind(), ErrorKind::Empty);
        // The same id in two different orders is fine.
        assert!(parse_orders_str("a b\na b\n", "o", &it).is_ok());
    }

    #[test]
    fn items_errors() {
        let e = |t: &str| parse_items_str(t, "i").unwrap_err();
        assert_eq!(e("name,x\na,1\n").kind(), ErrorKind::Unknown);
        assert_eq!(e("id,x\na,1\na,2\n").kind(), ErrorKind::Duplicate);
        assert_eq!(e("id,x\na,\n").kind(), ErrorKind::Malformed);
        assert_eq!(e("id,x\na,inf\n").kind(), ErrorKind::NonFinite);
        assert_eq!(e("id,x\n\"a b\",1\n").kind(), ErrorKind::Malformed);
        assert_eq!(e("id,x\n").kind(), ErrorKind::Empty);
    }
}
