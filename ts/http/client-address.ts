// Who a request comes from, for the per-address limit of the free endpoints. Behind a load
// balancer every request's socket is the balancer's, so the balancer's addresses can be named
// trusted (STOREMAP_TRUSTED_PROXIES): then, and only then, X-Forwarded-For counts, read from the
// right (what the nearest trusted proxy saw) past every trusted hop to the first address it did
// not add. An IPv6 client is its /64: one host has a whole /64 to pick addresses from.
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

/** Addresses and CIDR blocks (IPv4 or IPv6) as a BlockList; throws on a malformed entry. */
export function trustedProxies(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [addr, bits, extra] = entry.split('/');
    const family = isIP(addr);
    if (family === 0 || extra !== undefined) throw new Error(`"${entry}" is not an IP address or CIDR block`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(addr, type);
    else {
      const prefix = Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) throw new Error(`"${entry}": the prefix must be 0-${family === 4 ? 32 : 128}`);
      list.addSubnet(addr, prefix, type);
    }
  }
  return list;
}

/** An IPv4-mapped IPv6 address (::ffff:1.2.3.4) as the IPv4 address it is. */
function plain(addr: string): string {
  return addr.toLowerCase().startsWith('::ffff:') && isIP(addr.slice(7)) === 4 ? addr.slice(7) : addr;
}

function trusted(list: BlockList, addr: string): boolean {
  const family = isIP(addr);
  return family !== 0 && list.check(addr, family === 4 ? 'ipv4' : 'ipv6');
}

/** The first 64 bits of an IPv6 address, as text. */
function slash64(addr: string): string {
  const [head, tail = ''] = addr.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = addr.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/** The key a request's client is limited under. */
export function clientKey(req: IncomingMessage, proxies: BlockList | undefined): string {
  let addr = plain(req.socket.remoteAddress ?? 'unknown');
  if (proxies && trusted(proxies, addr)) {
    const hops = String(req.headers['x-forwarded-for'] ?? '')
      .split(',')
      .map((h) => plain(h.trim()))
      .filter((h) => isIP(h) !== 0);
    for (let i = hops.length - 1; i >= 0; i--) {
      addr = hops[i];
      if (!trusted(proxies, addr)) break;
    }
  }
  return isIP(addr) === 6 ? slash64(addr) : addr;
}
