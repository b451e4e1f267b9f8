/**
 * Names that look the same to a person: case, compatibility forms (fullwidth letters), invisible characters and
 * Cyrillic or Greek look-alikes of Latin letters folded away. Settings use it so that a rule for `BASH` or `Bаsh`
 * (Cyrillic а) is an error naming the tool meant, never a rule that silently matches nothing.
 *
 * @since 0.3.0
 */

/** Characters that look like Latin letters (Cyrillic and Greek capitals and small letters), mapped to them. */
const lookAlikes: Readonly<Record<string, string>> = {
  "а": "a",
  "е": "e",
  "о": "o",
  "р": "p",
  "с": "c",
  "у": "y",
  "х": "x",
  "і": "i",
  "ј": "j",
  "ѕ": "s",
  "һ": "h",
  "ԁ": "d",
  "ԛ": "q",
  "ԝ": "w",
  "А": "a",
  "В": "b",
  "Е": "e",
  "К": "k",
  "М": "m",
  "Н": "h",
  "О": "o",
  "Р": "p",
  "С": "c",
  "Т": "t",
  "Х": "x",
  "І": "i",
  "Ј": "j",
  "Ѕ": "s",
  "α": "a",
  "ο": "o",
  "ν": "v",
  "ι": "i",
  "κ": "k",
  "ρ": "p",
  "τ": "t",
  "υ": "u",
  "Α": "a",
  "Β": "b",
  "Ε": "e",
  "Ζ": "z",
  "Η": "h",
  "Ι": "i",
  "Κ": "k",
  "Μ": "m",
  "Ν": "n",
  "Ο": "o",
  "Ρ": "p",
  "Τ": "t",
  "Υ": "y",
  "Χ": "x"
}

/**
 * A name as it looks: compatibility forms folded (fullwidth), invisible characters removed, look-alikes mapped, case.
 */
const appearance = (name: string): string =>
  [...name.normalize("NFKC").replace(/[\p{Cf}\p{Mn}]/gu, "")].map((c) => lookAlikes[c] ?? c).join("").toLowerCase()

/**
 * Two different names that a person reading them would take for the same one (`BASH`, `Bаsh` with a Cyrillic а).
 *
 * @since 0.3.0
 * @category matching
 */
export const sameLooking = (known: string, name: string): boolean =>
  known !== name && appearance(known) === appearance(name)
