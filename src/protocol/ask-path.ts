/**
 * The wire path of an ask's reply target, `/temp/$ask<id>#<id>` (src/actor/ask.ts names
 * the target `$ask<id>` under `/temp` with uid = id). Every ask that crosses the network
 * carries one and every reply is addressed to one: these read the id without splitting
 * the path, decoding its bytes or allocating. Only the canonical spelling counts (the
 * same decimal digits twice, no leading zero, a safe integer > 0); anything else is -1
 * and takes the general way (`parseActorPath`).
 */

/** The path prefix of an ask's reply target, up to its id. */
export const ASK_PATH_PREFIX = "/temp/$ask";
const PREFIX_LENGTH = ASK_PATH_PREFIX.length;
/** At most 16 digits (Number.MAX_SAFE_INTEGER has 16). */
const DIGITS_MAX = 16;

/** The ask id of the path `text`, else -1 (see the module comment). */
export function askIdOfPath(text: string): number {
  const n = text.length;
  if (n < PREFIX_LENGTH + 3 || !text.startsWith(ASK_PATH_PREFIX)) return -1;
  let id = 0;
  let i = PREFIX_LENGTH;
  for (; i < n; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c < 0 || c > 9) break;
    id = id * 10 + c;
  }
  const digits = i - PREFIX_LENGTH;
  if (!plausible(id, digits, text.charCodeAt(PREFIX_LENGTH), i, n)) return -1;
  if (text.charCodeAt(i) !== 35 || n !== i + 1 + digits) return -1; // "#", as many digits
  for (let j = 0; j < digits; j++)
    if (text.charCodeAt(i + 1 + j) !== text.charCodeAt(PREFIX_LENGTH + j)) return -1;
  return id;
}

/** The ask id of the UTF-8 path `b[at, at + length)`, else -1 (see the module comment). */
export function askIdOfPathBytes(b: Uint8Array, at: number, length: number): number {
  if (length < PREFIX_LENGTH + 3) return -1;
  for (let k = 0; k < PREFIX_LENGTH; k++)
    if (b[at + k] !== ASK_PATH_PREFIX.charCodeAt(k)) return -1;
  const n = at + length;
  const first = at + PREFIX_LENGTH;
  let id = 0;
  let i = first;
  for (; i < n; i++) {
    const c = (b[i] as number) - 48;
    if (c < 0 || c > 9) break;
    id = id * 10 + c;
  }
  const digits = i - first;
  if (!plausible(id, digits, b[first] as number, i, n)) return -1;
  if (b[i] !== 35 || n !== i + 1 + digits) return -1; // "#", as many digits
  for (let j = 0; j < digits; j++) if (b[i + 1 + j] !== b[first + j]) return -1;
  return id;
}

/** Some digits, not too many, no leading zero, a safe integer, and room for "#". */
function plausible(id: number, digits: number, firstCode: number, i: number, n: number): boolean {
  return (
    digits > 0 && digits <= DIGITS_MAX && firstCode !== 48 && i < n && id <= Number.MAX_SAFE_INTEGER
  );
}
