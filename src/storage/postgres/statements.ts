/**
 * A migration file's statements, one by one: the migration runner sends one statement per
 * query, as Citus needs (several statements in one query string are planned together, and
 * citusdata/citus#6608 breaks DDL on distributed tables sent that way). Splits on `;` outside
 * quoted strings, quoted identifiers, dollar-quoted bodies and comments.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  const push = (end: number) => {
    const text = sql.slice(start, end).trim();
    if (stripComments(text) !== '') statements.push(text);
    start = end + 1;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'" || c === '"') {
      // A doubled quote inside is the quote itself: the scan resumes after the pair.
      let j = i + 1;
      for (;;) {
        const end = sql.indexOf(c, j);
        if (end < 0) {
          j = sql.length;
          break;
        }
        if (sql[end + 1] === c) j = end + 2;
        else {
          j = end + 1;
          break;
        }
      }
      i = j;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))?.[0];
      if (tag === undefined) i += 1;
      else {
        const end = sql.indexOf(tag, i + tag.length);
        i = end < 0 ? sql.length : end + tag.length;
      }
    } else if (c === ';') {
      push(i);
      i += 1;
    } else i += 1;
  }
  push(sql.length);
  return statements;
}

function stripComments(text: string): string {
  return text
    .replace(/--[^\n]*/g, '')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .trim();
}
