/**
 * Incremental 64-bit FNV-1a over the UTF-8 bytes of the strings fed to it.
 *
 * Used for trace hashes: a stable, platform-independent fingerprint of a simulation
 * run that can be computed on the fly, so long runs need not keep their trace in
 * memory. The 64-bit state lives in four 16-bit limbs so all arithmetic stays exact in
 * doubles (no BigInt on the hot path). Not a cryptographic hash.
 */

/** Streaming FNV-1a (64-bit). */
export class Fnv1a64 {
  // Offset basis 0xcbf29ce484222325, least significant limb first.
  private h0 = 0x2325;
  private h1 = 0x8422;
  private h2 = 0x9ce4;
  private h3 = 0xcbf2;

  /** Feeds the UTF-8 encoding of `text`. */
  update(text: string): this {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80) this.byte(c);
      else if (c < 0x800) this.bytes2(c);
      else if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
        this.bytes4(0x10000 + ((c - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00));
      } else this.bytes3(isSurrogate(c) ? 0xfffd : c);
    }
    return this;
  }

  /** The current hash as 16 lowercase hex digits. */
  digest(): string {
    return [this.h3, this.h2, this.h1, this.h0]
      .map((l) => l.toString(16).padStart(4, "0"))
      .join("");
  }

  private bytes2(c: number): void {
    this.byte(0xc0 | (c >> 6));
    this.byte(0x80 | (c & 0x3f));
  }

  private bytes3(c: number): void {
    this.byte(0xe0 | (c >> 12));
    this.byte(0x80 | ((c >> 6) & 0x3f));
    this.byte(0x80 | (c & 0x3f));
  }

  private bytes4(cp: number): void {
    this.byte(0xf0 | (cp >> 18));
    this.byte(0x80 | ((cp >> 12) & 0x3f));
    this.byte(0x80 | ((cp >> 6) & 0x3f));
    this.byte(0x80 | (cp & 0x3f));
  }

  /** h = (h ^ b) * 0x100000001b3 mod 2^64, with the prime split as 2^40 + 0x1b3. */
  private byte(b: number): void {
    const h0 = this.h0 ^ b;
    const t0 = h0 * 0x1b3;
    let t1 = this.h1 * 0x1b3;
    let t2 = this.h2 * 0x1b3 + (h0 << 8);
    const t3 = this.h3 * 0x1b3 + (this.h1 << 8);
    t1 += t0 >>> 16;
    t2 += t1 >>> 16;
    this.h0 = t0 & 0xffff;
    this.h1 = t1 & 0xffff;
    this.h2 = t2 & 0xffff;
    this.h3 = (t3 + (t2 >>> 16)) & 0xffff;
  }
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function isSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdfff;
}
