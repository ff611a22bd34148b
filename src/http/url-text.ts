import { type Issue, problem } from '../domain/errors.js';
import { messages } from '../domain/messages.js';
import { unstorableAt } from '../domain/text.js';
import { invalidInput } from './validation.js';

/**
 * Where the URL's text becomes data: the path and every query name and value are percent-encoded
 * UTF-8 and hold no U+0000, or the request is refused naming where (docs/contract.md#text). The
 * parser alone would keep a broken `%FF` as the three characters `%FF` and a `%00` as a NUL that
 * no database column takes: either would be a silent change or a 500 further in.
 */
export function assertUrlText(url: string): void {
  const mark = url.indexOf('?');
  const path = mark === -1 ? url : url.slice(0, mark);
  const outside = /[^\x21-\x7e]/.exec(url);
  if (outside) {
    throw problem('BAD_REQUEST', messages.urlNotEncoded(outside.index));
  }
  const decodedPath = decode(path, false);
  if (decodedPath === null) {
    throw problem('BAD_REQUEST', messages.brokenPercentEncoding());
  }
  const inPath = unstorableAt(decodedPath);
  if (inPath) {
    throw problem('BAD_REQUEST', messages.pathHasCharacter(inPath.what, inPath.index));
  }
  if (mark === -1) return;
  const issues: Issue[] = [];
  for (const pair of url.slice(mark + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const name = decode(rawName, true);
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1), true);
    const shown = `query.${name ?? rawName}`;
    if (name === null || value === null) {
      issues.push({
        path: shown,
        message: 'is not percent-encoded UTF-8 (a %-sequence that is no UTF-8 character)',
        code: 'invalid_encoding',
      });
      continue;
    }
    const bad = unstorableAt(name) ?? unstorableAt(value);
    if (bad) {
      issues.push({
        path: shown,
        message: `contains ${bad.what} in its ${unstorableAt(name) ? 'name' : 'value'}`,
        code: 'invalid_text',
      });
    }
  }
  if (issues.length) throw invalidInput('query', issues);
}

/** Percent-decoding that fails rather than guesses (`+` is a space in a query). */
function decode(text: string, query: boolean): string | null {
  if (!text.includes('%')) return query ? text.replaceAll('+', ' ') : text;
  try {
    return decodeURIComponent(query ? text.replaceAll('+', ' ') : text);
  } catch {
    return null;
  }
}
