/**
 * A small valid PDF built in the test: one page per string, each page showing its text in Helvetica, with a correct
 * cross-reference table (so a strict reader opens it as a real file).
 */
export const makePdf = (pages: ReadonlyArray<string>): Buffer => {
  const objects: Array<string> = []
  const pageIds = pages.map((_, i) => 4 + i * 2)
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>"
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
  pages.forEach((text, i) => {
    const escaped = text.replace(/\\/g, "\\\\").replace(/\(/g, "\\(").replace(/\)/g, "\\)")
    const stream = `BT /F1 12 Tf 72 720 Td (${escaped}) Tj ET`
    objects[pageIds[i]!] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${
        pageIds[i]! + 1
      } 0 R >>`
    objects[pageIds[i]! + 1] = `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`
  })
  let body = "%PDF-1.4\n"
  const offsets: Array<number> = []
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = Buffer.byteLength(body)
    body += `${id} 0 obj\n${objects[id]}\nendobj\n`
  }
  const xref = Buffer.byteLength(body)
  body += `xref\n0 ${objects.length}\n0000000000 65535 f \n`
  for (let id = 1; id < objects.length; id++) body += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`
  body += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(body, "latin1")
}
