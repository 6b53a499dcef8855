// Command curl is secexec's curl and wget, one multi-call program that
// acts as the one its argv[0] names (webget.Main): curl 7.88's and GNU
// wget 1.21's command lines over HTTP/1.1 and HTTPS, compiled to WASI
// (GOOS=wasip1). Inside the sandbox every connection is made by the host
// through the agentOS host_net imports, under the VM's network policy,
// and TLS is run and verified by the host.
package main
