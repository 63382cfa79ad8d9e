// The local stand-in of the service, for tests, the demo and users' own integration tests.
export { contentFor, type GenerateOptions, generateThreats, seededRandom, type StandinThreat } from './data.js';
export { type Fault, FaultController } from './faults.js';
export { type ListEvent, type ListRequestMatch, type ThreatChange, type ThreatPatch } from './list-events.js';
export { type RequestRecord, type Standin, type StandinKeys, type StandinOptions, type StandinStats, startStandin } from './server.js';
export { generateReports, type ReportsVariant, type StandinProposal, type StandinReport } from './reports.js';
