/**
 * Who did something, as the store records it (docs/team.md, "People"): beside the surface
 * (`cli`, `lsp`, `mcp`, `http_control`), the person its transaction acted for (a PostgreSQL role,
 * or the operating-system user of a SQLite store). A record written before people were recorded
 * has no person: it is shown as unknown.
 */
export function who(surface: string, person: string | null | undefined): string {
  return person === null || person === undefined ? `${surface}, person unknown` : `${person} via ${surface}`;
}
