import { writeFileSync } from 'node:fs';
import { startLab } from './helpers.js';
it('dump', async () => {
  const lab = await startLab();
  const doc = (await lab.admin.get('/app/openapi.json').expect(200)).body;
  writeFileSync('/tmp/doc.json', JSON.stringify(doc, null, 1));
  const inst = (await lab.admin.get('/app/instruments/').set('Accept','application/json')).body;
  writeFileSync('/tmp/inst.json', JSON.stringify(inst, null, 1));
  await lab.close();
});
