/**
 * Cassandra as Maven Central carries it: `cassandra-all` and its runtime jars,
 * fetched with mvn into the cache folder (Maven Central has no tarball).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CASSANDRA_VERSION, LocalNodeError, type LocalNodeOptions } from './options.js';

function requireTool(cmd: string, args: string[], what: string): string {
  const out = spawnSync(cmd, args, { encoding: 'utf8' });
  if (out.error || out.status !== 0) {
    throw new LocalNodeError(
      `${what} is required to run the local Cassandra node but \`${cmd}\` was not found or failed. ` +
        `Install it (Debian: apt-get install ${cmd === 'java' ? 'openjdk-17-jre-headless' : 'maven'}), ` +
        'or point the server at a cluster with CASSANDRA_CONTACT_POINTS.',
    );
  }
  return `${out.stdout}${out.stderr}`;
}

export function checkJava(): void {
  const version = requireTool('java', ['-version'], 'Java 17 or newer');
  const match = /version "(\d+)(?:\.(\d+))?/.exec(version);
  const major = match ? Number(match[1] === '1' ? match[2] : match[1]) : 0;
  if (major < 17) {
    throw new LocalNodeError(`Java 17 or newer is required for Cassandra ${CASSANDRA_VERSION}; found: ${version.split('\n')[0]}`);
  }
}

const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>parley.local</groupId>
  <artifactId>cassandra-node</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>cassandra-all</artifactId>
      <version>${CASSANDRA_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;

/** Fetches cassandra-all and its runtime jars once; later calls are no-ops. */
export function fetchJars(opts: LocalNodeOptions): string {
  const libDir = join(opts.cacheDir, 'lib');
  const marker = join(opts.cacheDir, 'jars.complete');
  if (existsSync(marker)) return libDir;
  requireTool('mvn', ['-v'], 'Apache Maven');
  mkdirSync(opts.cacheDir, { recursive: true });
  writeFileSync(join(opts.cacheDir, 'pom.xml'), POM);
  opts.log(`fetching cassandra-all ${CASSANDRA_VERSION} and its runtime jars into ${libDir}`);
  const out = spawnSync(
    'mvn',
    ['-B', '-q', 'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${libDir}`],
    { cwd: opts.cacheDir, stdio: 'inherit' },
  );
  if (out.status !== 0) throw new LocalNodeError(`mvn failed to fetch the Cassandra jars (exit ${out.status})`);
  writeFileSync(marker, new Date().toISOString());
  return libDir;
}

/** A throwaway node names itself so a kept-data server never mistakes it for a real one. */
