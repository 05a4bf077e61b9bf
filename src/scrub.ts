/** Scrubbing the API key out of any text a user may see. Kept apart from the transport so the CLI can use it without loading undici. */

/**
 * A function that removes `apiKey` from a text in every form a service might echo it in: as sent,
 * in any letter case, in hex, and base64-encoded (standard or URL-safe, at any byte alignment inside
 * a longer encoded value).
 */
export function keyScrubber(apiKey: string): (text: string) => string {
  if (apiKey === '') return (text) => text;
  // A key too short to be real would match ordinary words in other forms: scrub it as sent only.
  if (apiKey.length < 8) return (text) => text.split(apiKey).join('[redacted]');
  const forms = new Set([apiKey, Buffer.from(apiKey).toString('hex')]);
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.from('\0'.repeat(offset) + apiKey).toString('base64');
    // Only whole 4-character groups made of key bytes alone are the same wherever the key sits.
    const first = Math.ceil(offset / 3);
    const end = Math.floor((offset + Buffer.byteLength(apiKey)) / 3);
    const stable = encoded.slice(first * 4, end * 4);
    if (stable.length >= 8) {
      forms.add(stable);
      forms.add(stable.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  const escape = (form: string): string => form.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const pattern = new RegExp([...forms].map(escape).join('|'), 'gi');
  return (text) => text.replace(pattern, '[redacted]');
}
