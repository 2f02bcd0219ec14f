import { expect } from 'chai';
import { signalUrl } from '../../../lib/telemetry/otel.ts';

describe('telemetry/otel', () => {
  it('puts each signal under <endpoint>/v1/<signal>, keeping a base path', () => {
    expect(signalUrl('http://collector:4318', 'metrics')).to.equal('http://collector:4318/v1/metrics');
    expect(signalUrl('http://collector:4318/', 'traces')).to.equal('http://collector:4318/v1/traces');
    expect(signalUrl('https://gw.example/otlp//', 'logs')).to.equal('https://gw.example/otlp/v1/logs');
    expect(signalUrl('http://c:4318/base?tenant=a', 'logs')).to.equal('http://c:4318/base/v1/logs?tenant=a');
  });
});
