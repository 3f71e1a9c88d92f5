"""Rewrite the adversarial corpus in this folder: python tests/corpus/make_corpus.py"""
import json, os


def main() -> None:
    D = os.path.dirname(os.path.abspath(__file__))
    def w(name, data):
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(os.path.join(D, name + ".toon"), mode, **({} if mode == "wb" else {"encoding": "utf-8", "newline": ""})) as f:
            f.write(data)
    def y(name, doc, expected):
        w("y_" + name, doc)
        with open(os.path.join(D, "y_" + name + ".json"), "w", encoding="utf-8") as f:
            json.dump(expected, f, ensure_ascii=False)
    Y = [
     ("crlf", "a: 1\r\nb:\r\n  c: x\r\nt[2]{p,q}:\r\n  1,2\r\n  3,4\r\n", {"a": 1, "b": {"c": "x"}, "t": [{"p": 1, "q": 2}, {"p": 3, "q": 4}]}),
     ("lone_cr_is_content", "a: x\ry", {"a": "x\ry"}),
     ("unicode_separators_are_content", "a: x\u2028y\u0085z\u000cw", {"a": "x\u2028y\u0085z\u000cw"}),
     ("nul_is_content", "a: x\u0000y", {"a": "x\u0000y"}),
     ("escaped_controls", 'a: "\\u0000\\u001f\\t\\r\\n\\\\\\""', {"a": "\u0000\u001f\t\r\n\\\""}),
     ("prototype_keys", "__proto__: 1\nconstructor:\n  prototype: 2\nt[1]{__proto__}:\n  3", {"__proto__": 1, "constructor": {"prototype": 2}, "t": [{"__proto__": 3}]}),
     ("hash_and_dash_keys", '"#k": 1\n"-k": 2\n"# not a comment": "#v"', {"#k": 1, "-k": 2, "# not a comment": "#v"}),
     ("big_int_2pow64_plus_1", "n: 18446744073709551617\nm: -18446744073709551617", {"n": 18446744073709551617, "m": -18446744073709551617}),
     ("unicode_keys_values", "ключ: значение\n名前: 🚀 x", {"ключ": "значение", "名前": "🚀 x"}),
     ("empty_document", "", {}),
     ("only_comments_and_blanks", "# a\n\n   # b\n", {}),
     ("comment_between_rows", "t[2]{a}:\n  1\n# c\n    # deeper comment\n  2", {"t": [{"a": 1}, {"a": 2}]}),
     ("colons_brackets_in_quotes", 'a: "x:[y]{z}"\nt[2]: "a:b","[c]"', {"a": "x:[y]{z}", "t": ["a:b", "[c]"]}),
     ("tab_delimiter_tabs_in_quotes", 't[2\t]{a\tb}:\n  "x\\ty"\t2\n  z\t3', {"t": [{"a": "x\ty", "b": 2}, {"a": "z", "b": 3}]}),
     ("nested_field_groups", "o[1]{a{b{c{d}}}}:\n  1", {"o": [{"a": {"b": {"c": {"d": 1}}}}]}),
     ("keyed_root", "[2:]{v}:\n  x: 1\n  y: 2", {"x": {"v": 1}, "y": {"v": 2}}),
     ("deep_objects_50", "".join("  " * i + f"k{i}:\n" for i in range(50)) + "  " * 50 + "v: 1", None),
     ("zero_length_forms", "a[0]:\nb: []\nc[0:]{x}:\nd:", {"a": [], "b": [], "c": {}, "d": {}}),
     ("numbers_edge", "a: -0\nb: 0e5\nc: 1E+2\nd: 5e-324\ne: 1.7976931348623157e308", {"a": 0, "b": 0.0, "c": 100.0, "d": 5e-324, "e": 1.7976931348623157e308}),
     ("not_numbers", "[7]: 05,+1,.5,1.,1_000,0x10,٥", ["05", "+1", ".5", "1.", "1_000", "0x10", "٥"]),
     ("hyphen_outside_lists", "- a: 1\n-b: 2", {"- a": 1, "-b": 2}),
     ("root_primitive_quoted", '"a: b"', "a: b"),
     ("trailing_newline_and_spaces", "a: 1   \nb: x  \n", {"a": 1, "b": "x"}),
    ]
    for name, doc, exp in Y:
        if exp is None:
            v = {}; cur = v
            for i in range(50):
                nxt = {}; cur[f"k{i}"] = nxt; cur = nxt
            cur["v"] = 1; exp = v
        y(name, doc, exp)
    N = [
     ("length_leading_zero", "a[03]: 1,2,3"), ("length_negative", "a[-1]: x"), ("length_plus", "a[+2]: x,y"),
     ("length_underscore", "a[1_0]: x"), ("length_fullwidth_digit", "a[２]: x,y"), ("length_space", "a[ 2]: x,y"),
     ("length_absent", "a[]: x"), ("length_huge_count_mismatch", "a[999999999999]: x"), ("length_too_many_digits", "a[99999999999999999999999]: x"),
     ("count_inline", "a[3]: x,y"), ("count_list", "a[2]:\n  - x"), ("count_list_extra", "a[1]:\n  - x\n  - y"),
     ("count_table", "t[3]{a}:\n  1\n  2"), ("count_keyed", "m[1:]{v}:\n  a: 1\n  b: 2"),
     ("width_table", "t[2]{a,b}:\n  1,2\n  3"), ("width_keyed", "m[1:]{a,b}:\n  k: 1"), ("width_keyed_bare", "m[1:]{a}:\n  k:"),
     ("delimiter_mismatch", "t[2|]{x,y}:\n  1|2\n  3|4"), ("bad_escape", 'a: "\\x41"'), ("surrogate_pair_escape", 'a: "\\ud83d\\ude00"'),
     ("lone_surrogate_escape", 'a: "\\udc00"'), ("short_unicode_escape", 'a: "\\u12"'), ("unterminated_string", 'a: "abc'),
     ("unterminated_key", '"abc: 1'), ("trailing_after_quote", 'a: "x"y'), ("missing_colon", "a:\n  b"), ("duplicate_keys", "a: 1\na: 2"),
     ("duplicate_nested_keys", "o:\n  a: 1\n  a: 2"), ("duplicate_entry_keys", "m[2:]{v}:\n  a: 1\n  a: 2"), ("duplicate_fields", "t[1]{a,a}:\n  1,2"),
     ("tab_indent", "a:\n\tb: 1"), ("bad_indent", "a:\n   b: 1"), ("depth_jump", "a:\n    b: 1"), ("over_indented", "a: 1\n  b: 2"),
     ("blank_in_list", "a[2]:\n  - x\n\n  - y"), ("blank_in_table", "t[2]{a}:\n  1\n\n  2"), ("blank_in_keyed", "m[2:]{v}:\n  a: 1\n\n  b: 2"),
     ("trailing_after_root_array", "[1]: x\nb: 2"), ("trailing_after_empty_root", "[]\nb: 2"), ("trailing_after_keyed_root", "[1:]{v}:\n  a: 1\nb: 2"),
     ("two_root_primitives", "a\nb"), ("keyless_header_in_object", "a:\n  [2]: 1,2"), ("keyless_tabular_list_item", "a[1]:\n  - [1]{x}:\n      1"),
     ("keyed_without_fields", "m[2:]:\n  a: 1\n  b: 2"), ("content_after_fields_header", "t[1]{a}: 1"), ("empty_fields", "t[1]{}:\n  1"),
     ("empty_nested_fields", "t[1]{a{}}:\n  1"), ("unmatched_brace", "t[1]{a:\n  1"), ("content_between_bracket_and_colon", "a[2]x: 1,2"),
     ("space_before_colon_in_header", "a[2] : 1,2"), ("scalar_in_list", "a[1]:\n  x"), ("row_colon_first", "t[2]{a,b}:\n  1,2\n  x: 3,4"),
     ("entry_without_colon", "m[2:]{v}:\n  a: 1\n  b"),
    ]
    for name, doc in N:
        w("n_" + name, doc)
    for name, data in [("invalid_utf8", b"a: \xff"), ("truncated_utf8", b"a: \xe2\x82"), ("surrogate_utf8", b"a: \xed\xa0\x80"),
                       ("overlong_utf8", b"a: \xc0\xaf"), ("invalid_utf8_in_key", b"\xfe: 1"), ("truncated_utf8_end_of_row", b"t[1]{a}:\n  \xf0\x9f\x9a")]:
        w("n_" + name, data)
    I = {
     "bom_utf8": (b"\xef\xbb\xbfa: 1", {}, {"value": {"a": 1}}, "one leading BOM is skipped"),
     "bom_inside_value": ("a: \ufeffx", {}, {"value": {"a": "\ufeffx"}}, "a BOM after the start is content"),
     "number_1e400": ("n: 1e400", {}, {"value": {"n": "Decimal:1e400"}}, "a float overflow becomes an exact Decimal"),
     "number_minus_1e400": ("n: -1e400", {}, {"value": {"n": "Decimal:-1e400"}}, "a float overflow becomes an exact Decimal"),
     "number_negative_zero_float": ("n: -0.0", {}, {"value": {"n": 0.0}}, "-0.0 decodes to 0.0"),
     "number_underflow": ("n: 1e-400", {}, {"value": {"n": 0.0}}, "underflow follows float(): 0.0 (use parse_float=Decimal to keep it)"),
     "number_precision": ("n: 0.1000000000000000055511151231257827", {}, {"value": {"n": 0.1}}, "floats round like float(); parse_float=Decimal keeps every digit"),
     "raw_control_in_quotes": ('a: "x\x01y"', {}, {"value": {"a": "x\x01y"}}, "raw control characters inside quotes are accepted"),
     "nonstrict_tab_indent": ("a:\n\tb: 1", {"strict": False}, {"error": "tab_indent"}, "tabs in indentation are errors in both modes"),
     "nonstrict_width_mismatch": ("t[2]{a,b}:\n  1\n  2,3", {"strict": False}, {"error": "width_mismatch"}, "row widths are enforced in both modes"),
     "nonstrict_over_indented": ("a: 1\n  b: 2", {"strict": False}, {"error": "over_indented"}, "orphan lines are errors in both modes (never dropped)"),
     "nonstrict_trailing_content": ("[1]: a\nb: 2", {"strict": False}, {"error": "trailing_content"}, "trailing content is an error in both modes"),
     "nonstrict_count_mismatch": ("t[5]: a,b", {"strict": False}, {"value": {"t": ["a", "b"]}}, "non-strict ignores counts"),
     "nonstrict_blank_in_list": ("t[2]:\n  - a\n\n  - b", {"strict": False}, {"value": {"t": ["a", "b"]}}, "non-strict ignores blank lines in arrays"),
     "nonstrict_bad_indent": ("a:\n   b: 1", {"strict": False}, {"value": {"a": {"b": 1}}}, "non-strict floors the depth"),
     "nonstrict_malformed_header": ("a[2]x: 1", {"strict": False}, {"value": {"a[2]x": 1}}, "non-strict falls back to a key-value line"),
     "nonstrict_invalid_utf8": (b"a: \xff", {"strict": False}, {"error": "invalid_utf8"}, "invalid UTF-8 is an error in both modes"),
    }
    manifest = {}
    for name, (doc, opts, expect, why) in I.items():
        w("i_" + name, doc)
        manifest["i_" + name] = {"options": opts, **expect, "policy": why}
    with open(os.path.join(D, "policies.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
    print(len(Y), len(N) + 6, len(I))



if __name__ == "__main__":
    main()
