/**
 * `sed` as a read-only command: `-n` with a script in a small print-only grammar.
 *
 * @internal
 */
import type { ShellWord } from "../Analysis.js"
import { opaque } from "./argumentRules.js"
import type { ArgumentRule } from "./argumentRules.js"

// -----------------------------------------------------------------------------
// sed scripts
// -----------------------------------------------------------------------------

/**
 * Whether a sed script stays within a print-only grammar. Deliberately small: anything it does not
 * understand is rejected.
 */
const sedScriptIsPrintOnly = (script: string): boolean => {
  let i = 0
  const n = script.length
  const skipBlank = () => {
    while (i < n && /[ \t]/.test(script[i]!)) i++
  }
  // A delimited section (`/re/`, `s/a/b/`): returns false when unterminated. Newlines are not allowed inside.
  const delimited = (delimiter: string): boolean => {
    while (i < n) {
      const c = script[i]!
      if (c === "\n") return false
      if (c === "\\") {
        i += 2
        continue
      }
      i++
      if (c === delimiter) return true
    }
    return false
  }
  const address = (): boolean => {
    const c = script[i]
    if (c === undefined) return true
    if (/[0-9]/.test(c)) {
      while (i < n && /[0-9]/.test(script[i]!)) i++
      if (script[i] === "~") {
        i++
        while (i < n && /[0-9]/.test(script[i]!)) i++
      }
      return true
    }
    if (c === "$") {
      i++
      return true
    }
    if (c === "/" || c === "\\") {
      let delimiter = "/"
      if (c === "\\") {
        delimiter = script[i + 1] ?? ""
        if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return false
        i += 2
      } else i++
      if (!delimited(delimiter)) return false
      while (i < n && /[IM]/.test(script[i]!)) i++
      return true
    }
    return true
  }
  let depth = 0
  while (i < n) {
    skipBlank()
    const c = script[i]
    if (c === undefined) break
    if (c === ";" || c === "\n") {
      i++
      continue
    }
    if (c === "}") {
      if (depth === 0) return false
      depth--
      i++
      continue
    }
    const start = i
    if (!address()) return false
    if (i > start) {
      skipBlank()
      if (script[i] === ",") {
        i++
        skipBlank()
        if (script[i] === "+" || script[i] === "~") {
          i++
          if (!/[0-9]/.test(script[i] ?? "")) return false
          while (i < n && /[0-9]/.test(script[i]!)) i++
        } else {
          const second = i
          if (!address() || i === second) return false
        }
      }
    }
    skipBlank()
    while (script[i] === "!") {
      i++
      skipBlank()
    }
    const command = script[i]
    if (command === undefined) return false
    i++
    if (command === "{") {
      depth++
      continue
    }
    if ("pP=ldDnNgGhHxz".includes(command)) {
      // fall through to the end-of-command check
    } else if (command === "q" || command === "Q") {
      skipBlank()
      while (i < n && /[0-9]/.test(script[i]!)) i++
    } else if (command === "s" || command === "y") {
      const delimiter = script[i]
      if (delimiter === undefined || delimiter === "\n" || delimiter === "\\" || delimiter === " ") return false
      i++
      if (!delimited(delimiter) || !delimited(delimiter)) return false
      if (command === "s") {
        while (i < n && /[gpiImM0-9]/.test(script[i]!)) i++
      }
    } else return false
    skipBlank()
    const end = script[i]
    if (end !== undefined && end !== ";" && end !== "\n" && end !== "}") return false
  }
  return depth === 0
}

export const sedRule: ArgumentRule = (args) => {
  let quiet = false
  const scripts: Array<string> = []
  let endOfOptions = false
  const positional: Array<ShellWord> = []
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!
    const value = word.value
    if (endOfOptions || !value.startsWith("-") || value === "-") {
      if (!word.literal && scripts.length === 0 && positional.length === 0) return opaque(word)
      positional.push(word)
      continue
    }
    if (!word.literal) return opaque(word)
    if (value === "--") {
      endOfOptions = true
      continue
    }
    if (value.startsWith("--")) {
      const name = value.split("=", 1)[0]!
      if (["--quiet", "--silent"].includes(name)) quiet = true
      else if (name === "--expression") {
        const script = value.includes("=") ? value.slice(value.indexOf("=") + 1) : args[++i]
        if (script === undefined) return "`sed --expression` needs a script"
        if (typeof script !== "string" && !script.literal) return opaque(script)
        scripts.push(typeof script === "string" ? script : script.value)
      } else if (
        ["--regexp-extended", "--posix", "--separate", "--null-data", "--unbuffered", "--debug", "--sandbox"]
          .includes(name)
      ) {
        // harmless
      } else return `\`sed ${name}\` is not known to be read-only`
      continue
    }
    // A short-option cluster: `-n`, `-nE`, `-ne 'p'`, `-e'p'`.
    for (let j = 1; j < value.length; j++) {
      const letter = value[j]!
      if (letter === "n") quiet = true
      else if ("Ersuz".includes(letter)) continue
      else if (letter === "e") {
        const rest = value.slice(j + 1)
        const next = rest.length > 0 ? undefined : args[++i]
        if (rest.length === 0 && next === undefined) return "`sed -e` needs a script"
        if (next !== undefined && !next.literal) return opaque(next)
        scripts.push(rest.length > 0 ? rest : next!.value)
        break
      } else if (letter === "i") return "`sed -i` edits files in place"
      else return `\`sed -${letter}\` is not known to be read-only`
    }
  }
  if (scripts.length === 0) {
    const first = positional[0]
    if (first === undefined) return "`sed` without a script"
    if (!first.literal) return opaque(first)
    scripts.push(first.value)
  }
  if (!quiet) return "`sed` is read-only only with `-n` and a print-only script"
  for (const script of scripts) {
    if (!sedScriptIsPrintOnly(script)) {
      return `\`sed\` script \`${script}\` is not recognised as print-only (it may write files or run commands)`
    }
  }
  return undefined
}
