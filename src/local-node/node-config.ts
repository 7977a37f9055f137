/** The files and JVM flags a local node runs with: cassandra.yaml, logback, Java 17's module openings. */
import { type LocalNodeOptions } from './options.js';

export const CLUSTER_NAME = { kept: 'parley-local', ephemeral: 'parley-ephemeral', cluster: 'parley-cluster' } as const;

/**
 * A single node owns 16 tokens and seeds itself. A member of the local cluster owns one token, the cluster's
 * tokens spaced evenly, and joins without bootstrapping (the cluster starts empty), which is what lets three
 * nodes come up in seconds each.
 */
function ringYaml(opts: LocalNodeOptions): string {
  const member = opts.clusterMember;
  if (!member) {
    return `cluster_name: ${opts.ephemeral ? CLUSTER_NAME.ephemeral : CLUSTER_NAME.kept}
num_tokens: 16
allocate_tokens_for_local_replication_factor: 1
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "${opts.host}:${opts.storagePort}"
`;
  }
  return `cluster_name: ${member.clusterName}
num_tokens: 1
initial_token: ${member.initialToken}
auto_bootstrap: false
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "${member.seeds}"
`;
}

export function cassandraYaml(opts: LocalNodeOptions): string {
  const d = opts.dataDir;
  return `${ringYaml(opts)}partitioner: org.apache.cassandra.dht.Murmur3Partitioner
commitlog_sync: periodic
commitlog_sync_period: 10000ms
listen_address: ${opts.host}
rpc_address: ${opts.host}
storage_port: ${opts.storagePort}
native_transport_port: ${opts.port}
endpoint_snitch: SimpleSnitch
data_file_directories:
  - ${d}/data
commitlog_directory: ${d}/commitlog
saved_caches_directory: ${d}/saved_caches
hints_directory: ${d}/hints
cdc_raw_directory: ${d}/cdc_raw
auto_snapshot: false
# paxos v2: fewer round trips per LWT than v1, which tells under bursts of LWTs on one key.
paxos_variant: v2
# A laptop or CI box with 2 cores is slow under bursts of LWTs; give them room.
cas_contention_timeout: 5000ms
write_request_timeout: 5000ms
read_request_timeout: 5000ms
range_request_timeout: 10000ms
truncate_request_timeout: 60000ms
`;
}

export const LOGBACK = `<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} - %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDOUT"/></root>
  <logger name="org.apache.cassandra.service.CassandraDaemon" level="INFO"/>
  <logger name="org.apache.cassandra.transport.Server" level="INFO"/>
</configuration>
`;

// From Cassandra's conf/jvm17-server.options.
export const JAVA17_MODULE_FLAGS = [
  ...[
    'java.base/jdk.internal.misc',
    'java.base/jdk.internal.ref',
    'java.base/sun.nio.ch',
    'java.management.rmi/com.sun.jmx.remote.internal.rmi',
    'java.rmi/sun.rmi.registry',
    'java.rmi/sun.rmi.server',
    'java.sql/java.sql',
  ].map((m) => `--add-exports=${m}=ALL-UNNAMED`),
  ...[
    'java.base/java.lang.module',
    'java.base/jdk.internal.loader',
    'java.base/jdk.internal.ref',
    'java.base/jdk.internal.reflect',
    'java.base/jdk.internal.math',
    'java.base/jdk.internal.module',
    'java.base/jdk.internal.util.jar',
    'java.base/sun.nio.ch',
    'java.base/java.io',
    'java.base/java.nio',
    'java.base/java.util.concurrent',
    'java.base/java.util',
    'java.base/java.util.concurrent.atomic',
    'java.base/java.lang',
    'java.base/java.math',
    'java.base/java.lang.reflect',
    'java.base/java.net',
    'jdk.management/com.sun.management.internal',
  ].map((m) => `--add-opens=${m}=ALL-UNNAMED`),
];

