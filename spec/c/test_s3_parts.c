/* The parts of the S3 FileIO that need no server: where the configuration
 * comes from (options, AWS environment, ~/.aws profiles), the addressing
 * rule, the strict XML reader and the URI encoding of keys and queries. */
#include "test.h"
#include "pm_s3.h"
#include "pm_s3_xml.h"

static const char *const AWS_VARS[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                                       "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
                                       "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", NULL};
static char *home;

/* A clean environment: no AWS variables, HOME a temp dir without ~/.aws. */
static void clean_env(void) {
    for (const char *const *v = AWS_VARS; *v; v++) unsetenv(*v);
    setenv("HOME", home, 1);
}

static void write_file(const char *rel, const char *text) {
    char p[600];
    snprintf(p, sizeof p, "%s/%s", home, rel);
    tu_write_file(p, text, strlen(text));
}

TEST(test_defaults_without_anything) {
    clean_env();
    pm_s3_config c;
    pm_err e;
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
    CHECK_EQ_STR(c.region, "us-east-1");
    CHECK_EQ_STR(c.endpoint, "https://s3.us-east-1.amazonaws.com");
    CHECK(c.access_key == NULL && c.secret_key == NULL);   /* anonymous */
    CHECK_EQ_INT(c.path_style, 0);
    CHECK_EQ_INT(c.verify_tls, 1);
    pm_s3_config_free(&c);
}

TEST(test_options_win_over_env_and_profiles) {
    clean_env();
    setenv("AWS_ACCESS_KEY_ID", "envkey", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    setenv("AWS_SESSION_TOKEN", "envtoken", 1);
    setenv("AWS_REGION", "eu-west-1", 1);
    setenv("AWS_ENDPOINT_URL", "http://env.example:9000", 1);
    const char *opts[] = {"s3.access-key", "optkey", "s3.secret-key", "optsecret", "s3.endpoint", "minio.local:9000",
                          "s3.region", "ap-south-1", "unrelated.option", "x", NULL};
    pm_s3_config c;
    pm_err e;
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", opts, &e), PAIMON_OK);
    CHECK_EQ_STR(c.access_key, "optkey");
    CHECK_EQ_STR(c.secret_key, "optsecret");
    CHECK(c.session_token == NULL);   /* credentials are one set: not the env token */
    CHECK_EQ_STR(c.region, "ap-south-1");
    CHECK_EQ_STR(c.endpoint, "https://minio.local:9000");   /* no scheme: HTTPS */
    CHECK_EQ_INT(c.path_style, 0);
    pm_s3_config_free(&c);
    /* Hadoop's names (what Paimon mirrors s3.* to) and the token */
    const char *hopts[] = {"s3a.access.key", "k2", "fs.s3a.secret.key", "s2", "fs.s3a.session.token", "t2",
                           "fs.s3a.path.style.access", "true", "fs.s3a.endpoint", "s3.example.com",
                           "fs.s3a.connection.ssl.enabled", "false", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", hopts, &e), PAIMON_OK);
    CHECK_EQ_STR(c.access_key, "k2");
    CHECK_EQ_STR(c.session_token, "t2");
    CHECK_EQ_STR(c.endpoint, "http://s3.example.com");
    CHECK_EQ_INT(c.path_style, 1);
    CHECK_EQ_STR(c.region, "eu-west-1");
    pm_s3_config_free(&c);
    /* env alone */
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
    CHECK_EQ_STR(c.access_key, "envkey");
    CHECK_EQ_STR(c.session_token, "envtoken");
    CHECK_EQ_STR(c.endpoint, "http://env.example:9000");
    setenv("AWS_ENDPOINT_URL_S3", "http://s3only.example:9000/", 1);
    pm_s3_config_free(&c);
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
    CHECK_EQ_STR(c.endpoint, "http://s3only.example:9000");
    pm_s3_config_free(&c);
}

TEST(test_profiles) {
    clean_env();
    char d[600];
    snprintf(d, sizeof d, "mkdir -p '%s/.aws'", home);
    tu_sh(d);
    write_file(".aws/credentials", "[default]\naws_access_key_id = defkey\naws_secret_access_key = defsecret\n\n"
                                   "[prod]\n# comment\naws_access_key_id=prodkey\naws_secret_access_key=prodsecret\n"
                                   "aws_session_token = prodtoken\n");
    write_file(".aws/config", "[default]\nregion = us-west-2\n[profile prod]\nregion = eu-central-1\n"
                              "endpoint_url = http://10.0.0.5:7480\n");
    pm_s3_config c;
    pm_err e;
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
    CHECK_EQ_STR(c.access_key, "defkey");
    CHECK_EQ_STR(c.secret_key, "defsecret");
    CHECK_EQ_STR(c.region, "us-west-2");
    pm_s3_config_free(&c);
    setenv("AWS_PROFILE", "prod", 1);
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
    CHECK_EQ_STR(c.access_key, "prodkey");
    CHECK_EQ_STR(c.session_token, "prodtoken");
    CHECK_EQ_STR(c.region, "eu-central-1");
    CHECK_EQ_STR(c.endpoint, "http://10.0.0.5:7480");
    CHECK_EQ_INT(c.path_style, 1);   /* an IP endpoint */
    pm_s3_config_free(&c);
    /* other file locations */
    write_file("creds2", "[prod]\naws_access_key_id = otherkey\naws_secret_access_key = othersecret\n");
    char p[600];
    snprintf(p, sizeof p, "%s/creds2", home);
    setenv("AWS_SHARED_CREDENTIALS_FILE", p, 1);
    snprintf(p, sizeof p, "%s/no-config", home);
    setenv("AWS_CONFIG_FILE", p, 1);
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
    CHECK_EQ_STR(c.access_key, "otherkey");
    CHECK_EQ_STR(c.region, "us-east-1");
    pm_s3_config_free(&c);
}

/* Issue 24, defect 3: AWS_PROFILE=lak (no such profile) sent unsigned
 * requests and read as "HTTP 403"; a profile that assumes a role or runs
 * a process fell back to unsigned requests silently. */
TEST(test_profile_mistakes_are_named) {
    clean_env();
    char d[600];
    snprintf(d, sizeof d, "mkdir -p '%s/.aws'", home);
    tu_sh(d);
    write_file(".aws/credentials", "[default]\naws_access_key_id = defkey\naws_secret_access_key = defsecret\n"
                                   "[only-creds]\naws_access_key_id = k2\naws_secret_access_key = s2\n");
    write_file(".aws/config", "[profile ci]\nrole_arn = arn:aws:iam::123:role/x\nsource_profile = default\n"
                              "[profile tool]\ncredential_process = /bin/false\n"
                              "[profile sso]\nsso_session = corp\nsso_account_id = 1\n"
                              "[profile web]\nweb_identity_token_file = /tmp/token\n"
                              "[profile regional]\nregion = eu-west-1\n");
    pm_s3_config c;
    pm_err e;
    setenv("AWS_PROFILE", "lak", 1);
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "profile lak not found in ~/.aws/config or ~/.aws/credentials") != NULL);
    /* keys in the environment do not hide the typo (the AWS CLI refuses it too) */
    setenv("AWS_ACCESS_KEY_ID", "envkey", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_MISUSE);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_PROFILE");
    setenv("AWS_DEFAULT_PROFILE", "lak", 1);            /* the older variable, same rule */
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_MISUSE);
    setenv("AWS_DEFAULT_PROFILE", "only-creds", 1);     /* a profile only the credentials file has */
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
    CHECK_EQ_STR(c.access_key, "k2");
    pm_s3_config_free(&c);
    unsetenv("AWS_DEFAULT_PROFILE");
    static const char *const indirect[][2] = {{"ci", "role_arn"}, {"tool", "credential_process"},
                                              {"sso", "sso_session"}, {"web", "web_identity_token_file"}};
    for (int i = 0; i < 4; i++) {
        setenv("AWS_PROFILE", indirect[i][0], 1);
        CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_UNSUPPORTED);
        char want[200];
        snprintf(want, sizeof want, "profile %s gets its credentials through %s", indirect[i][0], indirect[i][1]);
        CHECK(strstr(e.msg, want) != NULL);
        /* keys given explicitly are used as they are */
        setenv("AWS_ACCESS_KEY_ID", "envkey", 1);
        setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
        CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
        CHECK_EQ_STR(c.access_key, "envkey");
        pm_s3_config_free(&c);
        unsetenv("AWS_ACCESS_KEY_ID");
        unsetenv("AWS_SECRET_ACCESS_KEY");
    }
    setenv("AWS_PROFILE", "regional", 1);               /* exists, no credentials: anonymous, as before */
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", NULL, &e), PAIMON_OK);
    CHECK_EQ_STR(c.region, "eu-west-1");
    CHECK(c.access_key == NULL);
    pm_s3_config_free(&c);
    clean_env();
}

TEST(test_addressing_rule_and_bad_options) {
    clean_env();
    pm_s3_config c;
    pm_err e;
    const char *local[] = {"s3.endpoint", "http://localhost:7480", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", local, &e), PAIMON_OK);
    CHECK_EQ_INT(c.path_style, 1);
    pm_s3_config_free(&c);
    const char *v6[] = {"s3.endpoint", "http://[::1]:7480", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", v6, &e), PAIMON_OK);
    CHECK_EQ_INT(c.path_style, 1);
    pm_s3_config_free(&c);
    CHECK_EQ_INT(pm_s3_config_load(&c, "my.dotted.bucket", NULL, &e), PAIMON_OK);
    CHECK_EQ_INT(c.path_style, 1);   /* dots break the virtual host's certificate */
    pm_s3_config_free(&c);
    const char *bad_bool[] = {"s3.path.style.access", "yes", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", bad_bool, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "s3.path.style.access") != NULL);
    const char *bad_retries[] = {"s3.max-retries", "-1", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", bad_retries, &e), PAIMON_MISUSE);
    const char *bad_timeout[] = {"s3.request-timeout", "soon", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", bad_timeout, &e), PAIMON_MISUSE);
    const char *timeouts[] = {"s3.request-timeout", "30 s", "s3.connect-timeout", "500 ms", "s3.max-retries", "2", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", timeouts, &e), PAIMON_OK);
    CHECK_EQ_INT(c.request_timeout_ms, 30000);
    CHECK_EQ_INT(c.connect_timeout_ms, 500);
    CHECK_EQ_INT(c.max_retries, 2);
    CHECK_EQ_INT(c.max_connections, PM_S3_MAX_CONNECTIONS_DEFAULT);
    pm_s3_config_free(&c);
    /* requests at once: Paimon's spelling and Hadoop's (fs.s3a.connection.maximum) */
    const char *conns[] = {"s3.max-connections", "8", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", conns, &e), PAIMON_OK);
    CHECK_EQ_INT(c.max_connections, 8);
    pm_s3_config_free(&c);
    const char *hconns[] = {"fs.s3a.connection.maximum", "64", NULL};
    CHECK(pm_s3_option_known(hconns[0]));
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", hconns, &e), PAIMON_OK);
    CHECK_EQ_INT(c.max_connections, 64);
    pm_s3_config_free(&c);
    const char *bad_conns[][3] = {{"s3.max-connections", "0", NULL}, {"s3.max-connections", "257", NULL},
                                  {"s3.max-connections", "many", NULL}};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(pm_s3_config_load(&c, "lake", bad_conns[i], &e), PAIMON_MISUSE);
        CHECK(strstr(e.msg, "s3.max-connections") != NULL);
    }
    /* a key without its secret: refused, and the key is not echoed */
    const char *half[] = {"s3.access-key", "HALFKEY123", NULL};
    CHECK_EQ_INT(pm_s3_config_load(&c, "lake", half, &e), PAIMON_MISUSE);
    CHECK(strstr(e.msg, "HALFKEY123") == NULL);
}

typedef struct xml_rec { char log[2048]; } xml_rec;

static int xml_log(void *ctx, int depth, const char *parent, const char *name, const char *text, size_t tl) {
    xml_rec *r = ctx;
    size_t n = strlen(r->log);
    snprintf(r->log + n, sizeof r->log - n, "%d:%s/%s=%.*s;", depth, parent, name, text ? (int)tl : 1,
             text ? text : "*");
    return 0;
}

TEST(test_xml_reader) {
    xml_rec r = {""};
    char root[64];
    pm_err e;
    const char *doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c -->"
                      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                      "<Contents><Key>a&amp;b &lt;&gt;&quot;&apos;&#65;&#x42;&#xe9;</Key><Size>3</Size></Contents>"
                      "<Empty/><IsTruncated>false</IsTruncated></ListBucketResult>\n";
    CHECK_EQ_INT(pm_xml_walk(doc, strlen(doc), xml_log, &r, root, "t", &e), PAIMON_OK);
    CHECK_EQ_STR(root, "ListBucketResult");
    CHECK_EQ_STR(r.log, "3:Contents/Key=a&b <>\"'AB\xc3\xa9;3:Contents/Size=3;2:ListBucketResult/Contents=*;"
                        "2:ListBucketResult/Empty=;2:ListBucketResult/IsTruncated=false;1:/ListBucketResult=*;");
    const char *bad[] = {"", "   ", "<a>", "<a></b>", "<a><b></a></b>", "<a>&nope;</a>", "<a>&#0;</a>", "<a>&#xD800;</a>",
                         "<a>&#1114112;</a>", "<a></a><b></b>", "text<a></a>", "<a><![CDATA[x]]></a>",
                         "<!DOCTYPE a><a></a>", "<a x=\"1></a>", "<a>&amp</a>", "<", "<a><</a>", "<a></a", "<?xml"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = pm_xml_walk(bad[i], strlen(bad[i]), NULL, NULL, root, "GET s3://b/k", &e);
        if (rc != PAIMON_IO) fprintf(stderr, "  accepted: %s\n", bad[i]);
        CHECK_EQ_INT(rc, PAIMON_IO);
        CHECK(strstr(e.msg, "GET s3://b/k") != NULL);
    }
    /* nesting past the limit is an error, not a crash */
    pm_buf deep = {0};
    for (int i = 0; i < 100; i++) pm_buf_printf(&deep, "<a>");
    for (int i = 0; i < 100; i++) pm_buf_printf(&deep, "</a>");
    CHECK_EQ_INT(pm_xml_walk((const char *)deep.data, deep.len, NULL, NULL, root, "t", &e), PAIMON_IO);
    CHECK(strstr(e.msg, "too deep") != NULL);
    pm_buf_free(&deep);
    /* every prefix of a good document: an error or the whole, never a crash */
    for (size_t n = 0; n + 1 < strlen(doc); n++) CHECK_EQ_INT(pm_xml_walk(doc, n, NULL, NULL, root, "t", &e), PAIMON_IO);
    pm_buf esc = {0};
    pm_xml_escape(&esc, "a&<b>\"'");
    pm_buf_cstr(&esc);
    CHECK_EQ_STR((char *)esc.data, "a&amp;&lt;b&gt;&quot;&apos;");
    pm_buf_free(&esc);
}

TEST(test_uri_encoding) {
    pm_buf b = {0};
    pm_s3_uri_encode(&b, "dt=2024-01-01/part 1+x~_.-/\xc3\xa9=%", 1);
    pm_buf_cstr(&b);
    CHECK_EQ_STR((char *)b.data, "dt%3D2024-01-01/part%201%2Bx~_.-/%C3%A9%3D%25");
    b.len = 0;
    pm_s3_uri_encode(&b, "1/abc+def==", 0);
    pm_buf_cstr(&b);
    CHECK_EQ_STR((char *)b.data, "1%2Fabc%2Bdef%3D%3D");
    pm_buf_free(&b);
}

int main(void) {
    home = tu_make_tmpdir("/tmp/pm_test_s3_parts.");
    if (!home) { printf("not ok - temp dir\n0 passed, 1 failed\n"); return 1; }
    RUN(test_defaults_without_anything);
    RUN(test_options_win_over_env_and_profiles);
    RUN(test_profiles);
    RUN(test_profile_mistakes_are_named);
    RUN(test_addressing_rule_and_bad_options);
    RUN(test_xml_reader);
    RUN(test_uri_encoding);
    tu_rm_rf(home);
    free(home);
    return TEST_SUMMARY();
}
