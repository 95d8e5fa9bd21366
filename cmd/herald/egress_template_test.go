package main

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/testkit/templatetest"
)

// This file checks the static egress option of template.yaml (StaticEgress)
// the way CloudFormation reads it: it evaluates the template's Conditions,
// Fn::If and AWS::NoValue for given parameter values (stack), then looks at
// what a deployment would get.

// noValue is what !Ref AWS::NoValue resolves to: dropped from its list or
// mapping.
type noValue struct{}

// tagged is a resolved intrinsic function other than Fn::If: its tag
// (!Ref, !GetAtt, !Sub, !Join, ...) and its resolved argument.
type tagged struct {
	tag string
	arg any
}

// stack is template.yaml evaluated with parameter values.
type stack struct {
	t      *testing.T
	root   *yaml.Node
	params map[string]string
	// declared are all the template's parameters, with a default or not.
	declared map[string]bool
	conds    map[string]bool
}

func deployTemplate(t *testing.T, params map[string]string) *stack {
	t.Helper()
	s := &stack{t: t, root: templatetest.Root(t), params: map[string]string{}, declared: map[string]bool{}, conds: map[string]bool{}}
	ps := templatetest.Child(s.root, "Parameters")
	for i := 0; i < len(ps.Content); i += 2 {
		name := ps.Content[i].Value
		s.declared[name] = true
		if d := templatetest.Child(ps.Content[i+1], "Default"); d != nil {
			s.params[name] = d.Value
		}
	}
	// A stack's required values: the parameter without a default that a
	// condition reads, and the signing secret a rule asks for.
	s.params["SenderIdentity"] = "example.com"
	s.params["WebhookSigningSecret"] = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	for k, v := range params {
		require.NotNil(t, templatetest.Child(ps, k), "no parameter %s", k)
		s.params[k] = v
	}
	return s
}

// cond evaluates the template's condition name.
func (s *stack) cond(name string) bool {
	if v, ok := s.conds[name]; ok {
		return v
	}
	n := templatetest.Path(s.root, "Conditions", name)
	require.NotNil(s.t, n, "no condition %s", name)
	v := s.truth(n)
	s.conds[name] = v
	return v
}

// truth evaluates a condition function (Fn::Equals, Not, And, Or,
// Condition), as in Conditions and Rules.
func (s *stack) truth(n *yaml.Node) bool {
	switch n.Tag {
	case "!Condition":
		return s.cond(n.Value)
	case "!Equals":
		require.Len(s.t, n.Content, 2)
		return s.scalar(n.Content[0]) == s.scalar(n.Content[1])
	case "!Not":
		require.Len(s.t, n.Content, 1)
		return !s.truth(n.Content[0])
	case "!And", "!Or":
		and := n.Tag == "!And"
		for _, c := range n.Content {
			if s.truth(c) != and {
				return !and
			}
		}
		return and
	}
	s.t.Fatalf("line %d: condition function %s not known to this test", n.Line, n.Tag)
	return false
}

// scalar is the string value of a literal or a parameter's !Ref; anything
// else fails the test.
func (s *stack) scalar(n *yaml.Node) string {
	switch {
	case n.Tag == "!Ref":
		v, ok := s.params[n.Value]
		require.True(s.t, ok, "line %d: !Ref %s is not a parameter with a value", n.Line, n.Value)
		return v
	case n.Kind == yaml.ScalarNode && !intrinsic(n):
		return n.Value
	case n.Tag == "!Join" && len(n.Content) == 2 && n.Content[1].Tag == "!Split":
		split := n.Content[1]
		require.Len(s.t, split.Content, 2)
		return strings.Join(strings.Split(s.scalar(split.Content[1]), s.scalar(split.Content[0])), s.scalar(n.Content[0]))
	}
	s.t.Fatalf("line %d: %s is not a scalar this test evaluates", n.Line, n.Tag)
	return ""
}

// resolve evaluates Fn::If and AWS::NoValue in n: the result is a string,
// []any, map[string]any, tagged or noValue.
func (s *stack) resolve(n *yaml.Node) any {
	switch {
	case n.Tag == "!If":
		require.Len(s.t, n.Content, 3, "line %d: !If takes a condition and two values", n.Line)
		if s.cond(n.Content[0].Value) {
			return s.resolve(n.Content[1])
		}
		return s.resolve(n.Content[2])
	case n.Tag == "!Ref" && n.Value == "AWS::NoValue":
		return noValue{}
	}
	var v any
	switch n.Kind {
	case yaml.ScalarNode:
		v = n.Value
	case yaml.SequenceNode:
		list := []any{}
		for _, c := range n.Content {
			if r := s.resolve(c); r != (noValue{}) {
				list = append(list, r)
			}
		}
		v = list
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i < len(n.Content); i += 2 {
			if r := s.resolve(n.Content[i+1]); r != (noValue{}) {
				m[n.Content[i].Value] = r
			}
		}
		v = m
	}
	if intrinsic(n) {
		return tagged{n.Tag, v}
	}
	return v
}

// intrinsic reports whether n is a short-form intrinsic function (!Ref),
// not a YAML type tag (!!str).
func intrinsic(n *yaml.Node) bool {
	return strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!")
}

// resources returns the resources the stack creates (no Condition, or a
// true one), resolved.
func (s *stack) resources() map[string]map[string]any {
	out := map[string]map[string]any{}
	rs := templatetest.Child(s.root, "Resources")
	for i := 0; i < len(rs.Content); i += 2 {
		if c := templatetest.Child(rs.Content[i+1], "Condition"); c != nil && !s.cond(c.Value) {
			continue
		}
		out[rs.Content[i].Value] = s.resolve(rs.Content[i+1]).(map[string]any)
	}
	return out
}

// outputs returns the outputs the stack has, resolved.
func (s *stack) outputs() map[string]map[string]any {
	out := map[string]map[string]any{}
	outs := templatetest.Child(s.root, "Outputs")
	for i := 0; i < len(outs.Content); i += 2 {
		if c := templatetest.Child(outs.Content[i+1], "Condition"); c != nil && !s.cond(c.Value) {
			continue
		}
		out[outs.Content[i].Value] = s.resolve(outs.Content[i+1]).(map[string]any)
	}
	return out
}

// rulesBroken returns the AssertDescription of each rule assertion that
// fails for the stack's parameters (CloudFormation's Rules, evaluated
// before any resource is touched).
func (s *stack) rulesBroken() []string {
	var broken []string
	rules := templatetest.Child(s.root, "Rules")
	for i := 0; i < len(rules.Content); i += 2 {
		rule := rules.Content[i+1]
		if c := templatetest.Child(rule, "RuleCondition"); c != nil && !s.truth(c) {
			continue
		}
		for _, a := range templatetest.Child(rule, "Assertions").Content {
			if !s.truth(templatetest.Child(a, "Assert")) {
				broken = append(broken, templatetest.Child(a, "AssertDescription").Value)
			}
		}
	}
	return broken
}

// named returns the names v refers to: !Ref X, !GetAtt X.Attr and
// ${X} / ${X.Attr} in !Sub strings, pseudo parameters (AWS::) left out.
func named(v any) []string {
	var out []string
	add := func(n string) {
		if n, _, _ = strings.Cut(n, "."); !strings.HasPrefix(n, "AWS::") {
			out = append(out, n)
		}
	}
	switch v := v.(type) {
	case tagged:
		switch v.tag {
		case "!Ref", "!GetAtt":
			if name, ok := v.arg.(string); ok {
				add(name)
				return out
			}
		case "!Sub":
			str, _ := v.arg.(string)
			locals := map[string]any{}
			if list, ok := v.arg.([]any); ok { // [string, {local: value}]
				str, _ = list[0].(string)
				locals, _ = list[1].(map[string]any)
				out = append(out, named(locals)...)
			}
			for _, m := range regexp.MustCompile(`\$\{([^!}][^}]*)\}`).FindAllStringSubmatch(str, -1) {
				if _, local := locals[m[1]]; !local {
					add(m[1])
				}
			}
			return out
		}
		return append(out, named(v.arg)...)
	case []any:
		for _, e := range v {
			out = append(out, named(e)...)
		}
	case map[string]any:
		for _, e := range v {
			out = append(out, named(e)...)
		}
	}
	return out
}

// requireWhole checks that every name the stack's resources and outputs
// refer to is one of its resources or parameters: a resource left out by
// its condition is referred to by nothing that stays.
func (s *stack) requireWhole(resources, outputs map[string]map[string]any) {
	s.t.Helper()
	for what, m := range map[string]map[string]map[string]any{"resource": resources, "output": outputs} {
		for name, body := range m {
			for _, ref := range named(body) {
				_, isResource := resources[ref]
				require.True(s.t, isResource || s.declared[ref], "%s %s refers to %s, which this stack does not have (%v)", what, name, ref, s.params["StaticEgress"])
			}
		}
	}
}

func refTo(name string) tagged { return tagged{"!Ref", name} }

// subnetCidr evaluates a subnet's CidrBlock, !Sub [${Network}.N.0/20,
// {Network: !Select [0, !Split [".0.0/16", !Ref EgressVpcCidr]]}], for the
// VPC network vpc.
func subnetCidr(t *testing.T, v any, vpc string) netip.Prefix {
	t.Helper()
	sub := v.(tagged)
	require.Equal(t, "!Sub", sub.tag)
	args := sub.arg.([]any)
	sel := args[1].(map[string]any)["Network"].(tagged)
	require.Equal(t, "!Select", sel.tag)
	split := sel.arg.([]any)[1].(tagged)
	require.Equal(t, tagged{"!Split", []any{".0.0/16", refTo("EgressVpcCidr")}}, split)
	network := strings.Split(vpc, ".0.0/16")[0]
	return netip.MustParsePrefix(strings.ReplaceAll(args[0].(string), "${Network}", network))
}

// statementSids returns the Sids of a role's inline policy statements.
func statementSids(t *testing.T, role map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, p := range role["Properties"].(map[string]any)["Policies"].([]any) {
		for _, st := range p.(map[string]any)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			st := st.(map[string]any)
			out[st["Sid"].(string)] = st
		}
	}
	return out
}

func egressNames[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, "Egress") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// TestStaticEgressOffAddsNothing: with StaticEgress none (the default) the
// stack has no VPC resource, no VpcConfig, no network interface permission
// and no egress output; and every other mode keeps all of that stack, only
// adding to it.
func TestStaticEgressOffAddsNothing(t *testing.T) {
	t.Parallel()
	off := deployTemplate(t, nil)
	require.Equal(t, "none", off.params["StaticEgress"])
	res, outs := off.resources(), off.outputs()
	off.requireWhole(res, outs)
	require.Empty(t, egressNames(res))
	require.Empty(t, egressNames(outs))
	require.NotContains(t, res["DeliverFunction"]["Properties"], "VpcConfig")
	require.Equal(t, "Delivers herald notifications from the notification queue.", res["DeliverFunction"]["Properties"].(map[string]any)["Description"])
	require.NotContains(t, statementSids(t, res["DeliverFunctionRole"]), "ManageVpcNetworkInterfaces")
	require.Empty(t, off.rulesBroken(), "the defaults break no egress rule")

	for _, on := range []map[string]string{
		{"StaticEgress": "create-vpc"},
		{"StaticEgress": "existing-subnets", "EgressSubnetIds": "subnet-0aaa1111", "EgressSecurityGroupIds": "sg-0aaa1111"},
	} {
		s := deployTemplate(t, on)
		onRes, onOuts := s.resources(), s.outputs()
		for name, body := range res {
			require.Contains(t, onRes, name, on)
			if name != "DeliverFunction" && name != "DeliverFunctionRole" {
				require.Equal(t, body, onRes[name], "%s changes with %v", name, on)
			}
		}
		for name := range outs {
			require.Contains(t, onOuts, name, on)
		}
		delete(onRes["DeliverFunction"]["Properties"].(map[string]any), "VpcConfig")
		if on["StaticEgress"] == "create-vpc" { // the description names the routes (TestStaticEgressCreateVpc)
			onRes["DeliverFunction"]["Properties"].(map[string]any)["Description"] = res["DeliverFunction"]["Properties"].(map[string]any)["Description"]
		}
		require.Equal(t, res["DeliverFunction"], onRes["DeliverFunction"], "DeliverFunction gains only its VpcConfig")
		onSids := statementSids(t, onRes["DeliverFunctionRole"])
		delete(onSids, "ManageVpcNetworkInterfaces")
		require.Equal(t, statementSids(t, res["DeliverFunctionRole"]), onSids, "DeliverFunctionRole gains only the network interface statement")
	}
}

// TestStaticEgressCreateVpc: per Availability Zone, a public subnet with a
// NAT gateway holding an Elastic IP, and a private subnet whose default
// route goes to that zone's NAT gateway; the deliver function in the
// private subnets; the DynamoDB gateway endpoint on their route tables;
// the addresses as the EgressIpAddresses output.
func TestStaticEgressCreateVpc(t *testing.T) {
	t.Parallel()
	for _, zones := range []int{1, 2, 3} {
		t.Run(fmt.Sprint(zones), func(t *testing.T) {
			t.Parallel()
			s := deployTemplate(t, map[string]string{"StaticEgress": "create-vpc", "EgressAvailabilityZones": fmt.Sprint(zones)})
			res, outs := s.resources(), s.outputs()
			s.requireWhole(res, outs)
			require.Empty(t, s.rulesBroken())

			var privates, tables, addresses []any
			var cidrs []netip.Prefix
			for i := 1; i <= zones; i++ {
				z := func(name string) string { return fmt.Sprintf(name, i) }
				nat := res[z("EgressNatGateway%d")]["Properties"].(map[string]any)
				require.Equal(t, tagged{"!GetAtt", z("EgressAddress%d.AllocationId")}, nat["AllocationId"])
				require.Equal(t, refTo(z("EgressPublicSubnet%d")), nat["SubnetId"])
				require.Equal(t, "vpc", res[z("EgressAddress%d")]["Properties"].(map[string]any)["Domain"])

				route := res[z("EgressPrivateDefaultRoute%d")]["Properties"].(map[string]any)
				require.Equal(t, "0.0.0.0/0", route["DestinationCidrBlock"])
				require.Equal(t, refTo(z("EgressNatGateway%d")), route["NatGatewayId"], "zone %d leaves through its own NAT gateway", i)
				require.Equal(t, refTo(z("EgressPrivateRouteTable%d")), route["RouteTableId"])
				assoc := res[z("EgressPrivateSubnet%dRouteTable")]["Properties"].(map[string]any)
				require.Equal(t, refTo(z("EgressPrivateSubnet%d")), assoc["SubnetId"])
				require.Equal(t, refTo(z("EgressPrivateRouteTable%d")), assoc["RouteTableId"])

				for _, kind := range []string{"EgressPublicSubnet%d", "EgressPrivateSubnet%d"} {
					p := res[z(kind)]["Properties"].(map[string]any)
					az := p["AvailabilityZone"].(tagged).arg.([]any)
					require.Equal(t, fmt.Sprint(i-1), az[0], "%s in zone %d", z(kind), i)
					require.Equal(t, "false", p["MapPublicIpOnLaunch"])
					cidrs = append(cidrs, subnetCidr(t, p["CidrBlock"], "172.20.0.0/16"))
				}
				privates = append(privates, refTo(z("EgressPrivateSubnet%d")))
				tables = append(tables, refTo(z("EgressPrivateRouteTable%d")))
				addresses = append(addresses, refTo(z("EgressAddress%d")))
			}
			vpcNet := netip.MustParsePrefix("172.20.0.0/16")
			for j, c := range cidrs {
				require.Equal(t, 20, c.Bits(), c)
				require.True(t, vpcNet.Contains(c.Addr()), "%s outside the VPC", c)
				for _, d := range cidrs[:j] {
					require.False(t, c.Overlaps(d), "%s overlaps %s", c, d)
				}
			}
			for _, kind := range []string{"EgressNatGateway%d", "EgressAddress%d", "EgressPrivateSubnet%d", "EgressPublicSubnet%d", "EgressPrivateDefaultRoute%d"} {
				require.NotContains(t, res, fmt.Sprintf(kind, zones+1), "no resource of a zone beyond %d", zones)
			}

			// The function is created once its routes and the DynamoDB
			// endpoint exist: it refers to them.
			fnRefs := named(res["DeliverFunction"])
			for i := 1; i <= zones; i++ {
				require.Contains(t, fnRefs, fmt.Sprintf("EgressPrivateDefaultRoute%d", i))
			}
			require.Contains(t, fnRefs, "EgressDynamoDbEndpoint")

			vpc := res["DeliverFunction"]["Properties"].(map[string]any)["VpcConfig"].(map[string]any)
			require.Equal(t, privates, vpc["SubnetIds"])
			require.Equal(t, []any{refTo("EgressFunctionSecurityGroup")}, vpc["SecurityGroupIds"])
			require.Equal(t, tables, res["EgressDynamoDbEndpoint"]["Properties"].(map[string]any)["RouteTableIds"])
			require.Equal(t, "Gateway", res["EgressDynamoDbEndpoint"]["Properties"].(map[string]any)["VpcEndpointType"])

			sg := res["EgressFunctionSecurityGroup"]["Properties"].(map[string]any)
			require.NotContains(t, sg, "SecurityGroupIngress", "nothing may connect to the function")

			require.Equal(t, tagged{"!Join", []any{",", addresses}}, outs[outputEgressAddresses]["Value"])
			require.Equal(t, tagged{"!Join", []any{",", privates}}, outs[outputEgressSubnets]["Value"])

			eni := statementSids(t, res["DeliverFunctionRole"])["ManageVpcNetworkInterfaces"]
			require.NotNil(t, eni)
			require.Contains(t, eni["Action"], "ec2:CreateNetworkInterface")
			require.Contains(t, eni["Action"], "ec2:DeleteNetworkInterface")
		})
	}
}

// TestStaticEgressExistingSubnets: the function in the given subnets with
// the given security groups; nothing of the VPC is created; the subnets
// are an output for herald egress to follow.
func TestStaticEgressExistingSubnets(t *testing.T) {
	t.Parallel()
	s := deployTemplate(t, map[string]string{"StaticEgress": "existing-subnets", "EgressSubnetIds": "subnet-0aaa1111,subnet-0bbb2222", "EgressSecurityGroupIds": "sg-0123456789abcdef0"})
	res, outs := s.resources(), s.outputs()
	s.requireWhole(res, outs)
	require.Empty(t, s.rulesBroken())
	require.Empty(t, egressNames(res))
	require.Equal(t, []string{outputEgressSubnets}, egressNames(outs))
	require.Equal(t, refTo("EgressSubnetIds"), outs[outputEgressSubnets]["Value"])
	vpc := res["DeliverFunction"]["Properties"].(map[string]any)["VpcConfig"].(map[string]any)
	require.Equal(t, tagged{"!Split", []any{",", refTo("EgressSubnetIds")}}, vpc["SubnetIds"])
	require.Equal(t, tagged{"!Split", []any{",", refTo("EgressSecurityGroupIds")}}, vpc["SecurityGroupIds"])
	require.Contains(t, statementSids(t, res["DeliverFunctionRole"]), "ManageVpcNetworkInterfaces")
}

// TestStaticEgressOnlyDeliverFunction: in every mode only the deliver
// function runs in the VPC; the other functions stay outside.
func TestStaticEgressOnlyDeliverFunction(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"none", "create-vpc", "existing-subnets"} {
		s := deployTemplate(t, map[string]string{"StaticEgress": mode, "EgressSubnetIds": "subnet-0aaa1111", "EgressSecurityGroupIds": "sg-0aaa1111"})
		var inVpc []string
		for name, body := range s.resources() {
			if p, ok := body["Properties"].(map[string]any); ok && p["VpcConfig"] != nil {
				inVpc = append(inVpc, name)
			}
		}
		if mode == "none" {
			require.Empty(t, inVpc)
		} else {
			require.Equal(t, []string{"DeliverFunction"}, inVpc, mode)
		}
	}
}

// TestStaticEgressRules: existing subnets need their subnets and security
// groups; the other modes refuse them.
func TestStaticEgressRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, subnets, groups string
		broken                bool
	}{
		{"existing-subnets", "subnet-0aaa1111", "sg-0aaa1111", false},
		{"existing-subnets", "", "sg-0aaa1111", true},
		{"existing-subnets", "subnet-0aaa1111", "", true},
		{"existing-subnets", "", "", true},
		{"create-vpc", "", "", false},
		{"create-vpc", "subnet-0aaa1111", "", true},
		{"none", "", "sg-0aaa1111", true},
		{"none", "", "", false},
	} {
		broken := deployTemplate(t, map[string]string{"StaticEgress": tc.mode, "EgressSubnetIds": tc.subnets, "EgressSecurityGroupIds": tc.groups}).rulesBroken()
		if tc.broken {
			require.Len(t, broken, 1, "%+v", tc)
			require.Contains(t, broken[0], "EgressSubnetIds", tc)
		} else {
			require.Empty(t, broken, "%+v", tc)
		}
	}
}

// TestEgressVpcCidrStaysBlocked: every network EgressVpcCidr admits lies
// in a range the webhook guard blocks (internal/outbound CheckDestination),
// so that no webhook reaches the VPC's own addresses (its router .1, its
// DNS resolver .2, the NAT gateways' private addresses) unless
// HERALD_WEBHOOK_ALLOW_CIDRS lists them; and it admits every /16 of the
// RFC 1918 ranges, 273 in all.
func TestEgressVpcCidrStaysBlocked(t *testing.T) {
	t.Parallel()
	p := templatetest.Path(templatetest.Root(t), "Parameters", "EgressVpcCidr")
	pattern := regexp.MustCompile(templatetest.Child(p, "AllowedPattern").Value)
	require.Regexp(t, pattern, templatetest.Child(p, "Default").Value)

	admitted := 0
	for a := 0; a < 256; a++ {
		for b := 0; b < 256; b++ {
			cidr := fmt.Sprintf("%d.%d.0.0/16", a, b)
			if !pattern.MatchString(cidr) {
				continue
			}
			admitted++
			prefix := netip.MustParsePrefix(cidr)
			base := prefix.Addr().As4()
			for _, host := range [][2]byte{{0, 0}, {0, 1}, {0, 2}, {1, 9}, {48, 77}, {255, 255}} {
				addr := netip.AddrFrom4([4]byte{base[0], base[1], host[0], host[1]})
				var blocked *outbound.BlockedError
				require.True(t, errors.As(outbound.CheckDestination(addr, nil), &blocked), "%s in VPC %s is not blocked", addr, cidr)
				require.NoError(t, outbound.CheckDestination(addr, []netip.Prefix{prefix}), "the operator's allow list opens %s", addr)
			}
		}
	}
	require.Equal(t, 256+16+1, admitted)
	for _, no := range []string{"10.0.0.0/8", "10.1.0.0/24", "10.256.0.0/16", "172.32.0.0/16", "172.15.0.0/16", "192.169.0.0/16", "100.64.0.0/16", "52.0.0.0/16", " 10.0.0.0/16", "10.0.1.0/16"} {
		require.NotRegexp(t, pattern, no)
	}
}

// TestEgressIDPatterns: the parameters of existing subnets take lists of
// IDs of either length EC2 gives (8 or 17 hex digits), or nothing.
func TestEgressIDPatterns(t *testing.T) {
	t.Parallel()
	params := templatetest.Child(templatetest.Root(t), "Parameters")
	subnets := regexp.MustCompile(templatetest.Path(params, "EgressSubnetIds", "AllowedPattern").Value)
	groups := regexp.MustCompile(templatetest.Path(params, "EgressSecurityGroupIds", "AllowedPattern").Value)
	for _, ok := range []string{"", "subnet-0aaa1111", "subnet-0123456789abcdef0,subnet-0aaa1111"} {
		require.Regexp(t, subnets, ok)
	}
	for _, no := range []string{"subnet-0aaa1111,", "subnet-0aaa1111, subnet-0bbb2222", "sg-0aaa1111", "subnet-XYZ12345", "subnet-0aaa1111;rm"} {
		require.NotRegexp(t, subnets, no)
	}
	for _, ok := range []string{"", "sg-0aaa1111", "sg-0123456789abcdef0,sg-0aaa1111"} {
		require.Regexp(t, groups, ok)
	}
	for _, no := range []string{"sg-0aaa1111,", "subnet-0aaa1111", "sg-0aaa111"} {
		require.NotRegexp(t, groups, no)
	}
}
