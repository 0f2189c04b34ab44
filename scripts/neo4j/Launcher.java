// Runs a real Neo4j 5.26 server (embedded DBMS + Bolt connector) without Docker.
//
//   java -cp 'scripts/neo4j/lib/*' scripts/neo4j/Launcher.java [--port N] [--data DIR]
//
// --port 0 or absent: pick a free port. --data absent: a temp dir, deleted on exit.
// When ready, prints exactly one line to stdout:  NEO4J READY bolt://127.0.0.1:<port>
// Everything else (Neo4j's own output included) goes to stderr or to DIR/logs/.
// SIGTERM / SIGINT: shuts the DBMS down cleanly and exits 0.
// Normally started through scripts/neo4j/run (fetches the jars, sets JVM flags).

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

public class Launcher {
    public static void main(String[] args) throws Exception {
        long jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
        long mainStart = System.currentTimeMillis(); // after the source-launch compile
        // Keep stdout for the READY line only: whatever Neo4j (or a library) prints
        // to System.out lands on stderr instead, so a reader of stdout sees one line.
        PrintStream stdout = System.out;
        System.setOut(System.err);

        int port = 0;
        Path data = null;
        Path conf = null;  // optional neo4j.conf-style settings, applied first
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[++i]); break;
                case "--data": data = Path.of(args[++i]); break;
                case "--conf": conf = Path.of(args[++i]); break;
                default:
                    System.err.println("usage: Launcher [--port N] [--data DIR] [--conf FILE]");
                    System.exit(2);
            }
        }
        boolean tempData = data == null;
        if (tempData) {
            data = Files.createTempDirectory("ars-neo4j-");
        }
        Files.createDirectories(data);
        if (port == 0) {
            port = freePort();
        }

        var builder = new DatabaseManagementServiceBuilder(data.toAbsolutePath());
        boolean ownPageCache = false;  // a --conf that sizes the page cache (bench/neo4j_scale.py) keeps its size
        if (conf != null) {
            builder.loadPropertiesFromFile(conf);
            var props = new java.util.Properties();
            try (var in = Files.newInputStream(conf)) {
                props.load(in);
            }
            ownPageCache = props.containsKey(GraphDatabaseSettings.pagecache_memory.name());
        }
        if (!ownPageCache) {
            // Modest memory for tests: the heap itself is capped by -Xmx in ./run.
            builder.setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(256));
        }
        DatabaseManagementService dbms = builder
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                // What the routing table names (neo4j:// URIs): this very address, so a
                // routing driver sends reads and writes back here, not to localhost:7687.
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // dbms.usage_report.enabled: no phoning home.
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.memory_transaction_global_max_size, ByteUnit.mebiBytes(512))
                // Many short-lived test databases: don't reserve disk for tx logs up front.
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                // Bolt waits 5 s + 5 s by default at shutdown, after the databases are
                // already checkpointed and closed; tests stop/restart often, so shorten it.
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofMillis(500))
                .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofMillis(500))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        final Path tempDir = tempData ? data : null;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                dbms.shutdown();
            } catch (Throwable t) {
                t.printStackTrace();
            }
            if (tempDir != null) {
                deleteTree(tempDir);
            }
            stopped.countDown();
        }, "neo4j-shutdown"));
        // A JVM killed by SIGTERM/SIGINT runs the hooks but then exits 143/130; turning
        // the signal into System.exit(0) runs the same hook and gives a clean exit code.
        for (String sig : new String[] {"TERM", "INT"}) {
            sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> System.exit(0));
        }

        // build() starts the default database, but wait until it accepts transactions.
        var db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        while (!db.isAvailable(1000)) {
            System.err.println("neo4j: waiting for database to become available");
        }

        long now = System.currentTimeMillis();
        System.err.printf("neo4j: ready %d ms after JVM start (%d ms before main, i.e. JVM + compile)%n",
                now - jvmStart, mainStart - jvmStart);
        stdout.println("NEO4J READY bolt://127.0.0.1:" + port);
        stdout.flush();
        stopped.await();
    }

    /** Binds port 0 to let the OS choose a free port, then releases it for Bolt. */
    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("neo4j: could not delete " + root + ": " + e);
        }
    }
}
