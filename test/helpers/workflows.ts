/** Workflows the tests share (API and end-to-end alike). */

/** A workflow over the demo reactor: its yield is the output to maximise (the campaign tests' workflow). */
export const REACTOR = {
  name: 'react',
  parameters: [
    { name: 'temperature', type: 'number', default: 60 },
    { name: 'time', type: 'number', default: 10 },
  ],
  outputs: ['run.yield'],
  main: [{ kind: 'call', instrument: 'reactor', method: 'run', args: { temperature: { param: 'temperature' }, time: { param: 'time' } }, save_as: 'run' }],
};
