// Which NATS servers a node refuses to run on (lib/jetstream/connect.ts openNatsRisk): those
// whose INFO says they authenticate nobody (no auth_required, no client certificates) and that
// listen beyond loopback (0.0.0.0 and :: included). Loopback is 127.0.0.0/8, ::1 (also
// IPv4-mapped) and "localhost". Also: what the client is given from --cluster URLs (splitUrls).
import { expect } from 'chai';
import { isLoopbackHost, openNatsRisk, showUrls, splitUrls } from '../../../lib/jetstream/connect.ts';

const info = (host: string, extra: { auth_required?: boolean; tls_verify?: boolean } = {}) => ({ host, port: 4222, ...extra });

describe('jetstream/connect', () => {
  describe('isLoopbackHost', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '127.255.255.254', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) {
      it(`${host} is loopback`, () => expect(isLoopbackHost(host)).to.equal(true));
    }
    for (const host of ['0.0.0.0', '::', '[::]', '', '10.0.0.1', '192.168.1.10', '128.0.0.1', '1.127.0.0', '127.0.0.256',
      '::ffff:10.0.0.1', '::2', 'n1.example.net', 'localhost.example.net', '127.0.0.1.example.net', 'fe80::1']) {
      it(`${JSON.stringify(host)} is not`, () => expect(isLoopbackHost(host)).to.equal(false));
    }
  });

  describe('openNatsRisk', () => {
    it('is null for a server that asks a login, wherever it listens', () => {
      for (const host of ['0.0.0.0', '::', '203.0.113.5', '127.0.0.1']) {
        expect(openNatsRisk(info(host, { auth_required: true })), host).to.equal(null);
      }
    });

    it('is null for a server that requires client certificates', () => {
      expect(openNatsRisk(info('0.0.0.0', { tls_verify: true }))).to.equal(null);
    });

    it('is null for a server without authentication on loopback only', () => {
      for (const host of ['127.0.0.1', '::1', 'localhost']) expect(openNatsRisk(info(host)), host).to.equal(null);
      expect(openNatsRisk(info('127.0.0.1', { auth_required: false }))).to.equal(null);
    });

    it('names a server without authentication beyond loopback, and where it listens', () => {
      expect(openNatsRisk(info('0.0.0.0'))).to.match(/requires no authentication and listens on 0\.0\.0\.0:4222, beyond loopback/);
      expect(openNatsRisk(info('0.0.0.0', { auth_required: false, tls_verify: false }))).to.include('0.0.0.0:4222');
      expect(openNatsRisk(info('::'))).to.include('[::]:4222');
      expect(openNatsRisk(info('198.51.100.7'))).to.include('198.51.100.7:4222');
      expect(openNatsRisk(info(''))).to.include('listens on every address');
      expect(openNatsRisk(info('0.0.0.0'))).to.include('its leader runs');
    });
  });

  describe('splitUrls', () => {
    it('takes user and password out of the URLs, for every server', () => {
      const r = splitUrls(['tls://tickd:p%40ss@n1.example.net:4222', 'tls://n2.example.net:4222']);
      expect(r).to.deep.equal({ servers: ['tls://n1.example.net:4222', 'tls://n2.example.net:4222'], tls: true, user: 'tickd', pass: 'p@ss' });
      expect(showUrls(['nats://u:secret@h:4222'])).to.equal('nats://h:4222');
      expect(splitUrls(['nats://h:4222'])).to.deep.equal({ servers: ['nats://h:4222'], tls: false });
    });
  });
});
