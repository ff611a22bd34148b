/** The page gzip-compressed (RFC 1952) at ISA-L's level 1, or null when ISA-L could not finish. */
export function gzip(input: Uint8Array): Buffer | null;
