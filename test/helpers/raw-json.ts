/**
 * Pieces of JSON text as they were sent, byte for byte (parsing and serializing again would hide
 * a difference: `1e-07` against `1e-7`, an escape written two ways).
 */

/** The text of the object or array that opens at `start`: brackets counted, strings skipped. */
export function rawValueAt(text: string, start: number): string {
  if (text[start] !== '{' && text[start] !== '[') throw new Error(`no object or array at ${start}`);
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  throw new Error('unterminated JSON value');
}

/** The text of each element of the array that opens right after `prefix` (`{"data":[` say). */
export function rawElements(text: string, prefix: string): string[] {
  if (!text.startsWith(prefix) || !prefix.endsWith('[')) throw new Error(`does not start with ${prefix}`);
  const items: string[] = [];
  let i = prefix.length;
  while (text[i] !== ']') {
    const item = rawValueAt(text, i);
    items.push(item);
    i += item.length;
    if (text[i] === ',') i++;
  }
  return items;
}

/** The text of the object under `"data"` in an answer that starts with it (`{"data":{...},...}`). */
export const rawData = (text: string): string => rawValueAt(text, '{"data":'.length);
